"""`ast.parse` that survives other threads parsing at the same time (CPython 3.11).

CPython 3.11 keeps the counter its AST constructor checks its recursion with in the
interpreter, not the thread (cpython#106905, and the per-interpreter `ast_state`): when a
garbage collection inside `ast.parse` runs a finalizer and the interpreter switches to another
thread that parses too (litellm's logging threads, or any thread formatting a 3.11 traceback,
which parses source lines to place its carets), the first parse fails with
`SystemError: AST constructor recursion depth mismatch` although its source is fine. A CI run
lost a whole search to it. Parses made here take one lock, so the engine's own threads never
meet; a parse that still meets a foreign one is done again: the counter is reset at the start
of every parse, and the tree of a source does not depend on it.
"""

from __future__ import annotations

import ast
import threading

_PARSE_LOCK = threading.RLock()  # a lock, not state: reentrant, since a finalizer may parse on the same thread
_MISMATCH = "recursion depth mismatch"
TRIES = 20


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse(source, filename)`, done again when CPython's shared counter was disturbed."""
    tree = _parse(source, filename, "exec")
    assert isinstance(tree, ast.Module)
    return tree


def parse_expression(source: str) -> ast.expr:
    """One expression (`ast.parse(source, mode="eval").body`), with the same protection."""
    tree = _parse(source, "<unknown>", "eval")
    assert isinstance(tree, ast.Expression)
    return tree.body


def _parse(source: str, filename: str, mode: str) -> ast.AST:
    for attempt in range(TRIES):
        try:
            with _PARSE_LOCK:
                return ast.parse(source, filename=filename, mode=mode)
        except SystemError as exc:
            if _MISMATCH not in str(exc) or attempt == TRIES - 1:
                raise
    raise AssertionError("unreachable")
