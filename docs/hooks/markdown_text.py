"""Text made safe for a Markdown table cell: what is in `backticks` stays code, the rest is escaped."""

from __future__ import annotations

import html

# characters Markdown would read as emphasis, links or a cell's end; escaped outside code spans
# (a `|` inside a code span does not end the cell: the tables extension skips code spans)
_ESCAPED = ("\\", "*", "_", "[", "]", "|")


def _plain(text: str) -> str:
    text = html.escape(text, quote=False)  # <run-id> is not an HTML tag
    for char in _ESCAPED:
        text = text.replace(char, "\\" + char)
    return text


def cell(text: str) -> str:
    """One table cell: on one line, its code spans kept as they are, the rest escaped."""
    text = " ".join(text.split())
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an odd number of backticks: no code span is meant, escape them all
        return _plain(text).replace("`", "\\`")
    return "`".join(part if i % 2 else _plain(part) for i, part in enumerate(parts))


def code(text: str) -> str:
    """`text` as one code span (none of its characters are Markdown)."""
    return f"`{text}`"
