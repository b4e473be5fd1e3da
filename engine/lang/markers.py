"""EVOLVE-BLOCK markers in a language's own comments, and markers a block comment swallowed.

ShinkaEvolve and OpenEvolve mark the part of a program that may change with
two comments, `EVOLVE-BLOCK-START` and `EVOLVE-BLOCK-END`, written in the
language's line-comment syntax (`//`, `#`, `!`, `--`). The region is what
lies between them. Found on the tree-sitter tree, not by text search, so a
marker inside a string is not a marker; and a marker inside a block comment
(`/* ... EVOLVE-BLOCK-END ... */`, `#= ... =#`) is refused with that reason:
it would silently make the whole rest of the file one comment.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.lang.registry import Language
from engine.lang.syntax import parse

START, END = "EVOLVE-BLOCK-START", "EVOLVE-BLOCK-END"


@dataclass(frozen=True)
class Region:
    start_line: int  # 0-based line of the START marker
    end_line: int  # 0-based line of the END marker (the region is the lines strictly between)


class MarkerError(ValueError):
    """The markers are missing, unpaired or inside a block comment (one line)."""


def evolve_region(source: str, language: Language) -> Region | None:
    """The marked region, or None when the file has no markers (the whole file may change)."""
    found: list[tuple[str, int]] = []
    for comment in _comments(parse(source, language).root_node):
        text = comment.text.decode("utf-8", "replace")
        for marker in (START, END):
            if marker not in text:
                continue
            if not text.lstrip().startswith(language.line_comment) or (
                language.block_comment and text.lstrip().startswith(language.block_comment[0])
            ):
                raise MarkerError(
                    f"line {comment.start_point[0] + 1}: {marker} is inside a block comment "
                    f"({text.strip()[:2]}...); write it as a {language.line_comment} comment"
                )
            found.append((marker, comment.start_point[0]))
    if not found:
        return None
    kinds = [m for m, _ in found]
    if kinds != [START, END]:
        raise MarkerError(f"expected one {START} then one {END} comment, found {', '.join(kinds)}")
    return Region(found[0][1], found[1][1])


def _comments(node):
    """Every comment node (tree-sitter grammars call them comment, line_comment or block_comment)."""
    if "comment" in node.type:
        yield node
        return
    for child in node.children:
        yield from _comments(child)
