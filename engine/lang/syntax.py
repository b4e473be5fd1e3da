"""A candidate's syntax, checked with tree-sitter before any sandbox sees it.

Why tree-sitter: one parser interface for every language, grammars shipped as
wheels (offline), and an error-tolerant parse that still says where the text
broke: an ERROR node (text the grammar could not place) or a MISSING one (a
token the grammar had to assume, such as a `;`). The first of them, in source
order, is the reason a child is refused: "line 3, column 27: missing ';'".
Without the grammar installed the check cannot run; `syntax_problem` says so
by raising GrammarMissing, so that a run can say which check it uses.
"""

from __future__ import annotations

import importlib
from functools import cache

from engine.lang.registry import Language

SHOWN_TEXT = 40


class GrammarMissing(Exception):
    """tree-sitter or this language's grammar is not installed (the `languages` extra)."""


@cache
def _parser(grammar: str):
    try:
        import tree_sitter

        module = importlib.import_module(grammar)
    except ImportError as exc:
        from engine.install import install_extra

        raise GrammarMissing(f"{exc.name or grammar} is not installed: {install_extra('languages')}") from None
    return tree_sitter.Parser(tree_sitter.Language(module.language()))


def parse(source: str, language: Language):
    """The tree-sitter tree of `source` (GrammarMissing without the grammar)."""
    return _parser(language.grammar).parse(source.encode("utf-8"))


def syntax_problem(source: str, language: Language) -> str | None:
    """Where `source` is not valid `language` (one line), or None when it parses cleanly."""
    root = parse(source, language).root_node
    if not root.has_error:
        return None
    bad = _first_error(root)
    if bad is None:  # has_error without a node we can point at: say so plainly
        return f"{language.name} syntax error"
    row, column = bad.start_point
    where = f"line {row + 1}, column {column + 1}"
    if bad.is_missing:
        return f"{where}: missing {bad.type!r} ({language.name} syntax)"
    text = bad.text.decode("utf-8", "replace").strip().splitlines()
    near = text[0][:SHOWN_TEXT] if text else ""
    return f"{where}: {language.name} syntax error" + (f" near {near!r}" if near else "")


def _first_error(node):
    """The first ERROR or MISSING node in source order, depth first."""
    if node.is_error or node.is_missing:
        return node
    for child in node.children:
        if child.has_error or child.is_missing:
            found = _first_error(child)
            if found is not None:
                return found
    return None
