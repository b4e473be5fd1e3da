"""mkdocs hook (mkdocs.yml `hooks:`): fills the generated reference pages at build time, so nothing generated
is committed and nothing goes stale.

A page asks for generated text with a marker line:

    <!-- clade:cli -->       every `clade` command: usage and options tables (cli_page.py)
    <!-- clade:schema -->    the archive's tables and columns (schema_page.py)

A command whose parser cannot be found, or a marker that names nothing, is a build warning, which
`mkdocs build --strict` (CI) turns into a failure.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import cli_page
import schema_page
from mkdocs.plugins import get_plugin_logger

log = get_plugin_logger("clade-reference")

_MARKER = re.compile(r"^<!-- clade:(\w+) -->$", re.MULTILINE)


def _cli_markdown() -> str:
    lines: list[str] = []
    for title, module, function in cli_page.PARSERS:
        build = cli_page.builder(module, function)
        if build is None:
            log.warning(f"reference/cli.md: {module}.{function} not found; `{title}` left out of the page")
            continue
        lines += cli_page.render(title, build())
    return "\n".join(lines)


GENERATORS = {"cli": _cli_markdown, "schema": schema_page.schema_markdown}


def on_config(config):
    # the parsers and the schema are imported from the checkout the site is built from, installed or not
    root = str(Path(config.config_file_path).resolve().parent)
    if root not in sys.path:
        sys.path.insert(0, root)
    return config


def on_page_markdown(markdown: str, page, config, files) -> str:
    def fill(match: re.Match) -> str:
        generate = GENERATORS.get(match.group(1))
        if generate is None:
            log.warning(f"{page.file.src_path}: no generator named {match.group(1)!r} (known: {', '.join(GENERATORS)})")
            return match.group(0)
        return generate()

    return _MARKER.sub(fill, markdown)
