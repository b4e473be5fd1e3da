"""engine.pyast.parse survives threads parsing at once (CPython 3.11's shared AST counter, cpython#106905)."""

from __future__ import annotations

import ast
import threading
from pathlib import Path

import pytest

from engine import pyast

SOURCE = (Path(__file__).resolve().parents[2] / "engine" / "loop" / "scheduler.py").read_text(encoding="utf-8")


class _CyclicWithFinalizer:
    """Garbage whose collection runs Python code: where the interpreter may switch threads mid-parse."""

    def __init__(self):
        self.me = self

    def __del__(self):
        sum(range(50))


def _parse_under_churn(parse, rounds: int, stop: threading.Event | None = None) -> list[str]:
    errors: list[str] = []
    for _ in range(rounds):
        if stop is not None and stop.is_set():
            break
        for _ in range(40):
            _CyclicWithFinalizer()
        try:
            parse(SOURCE)
        except SystemError as exc:
            errors.append(str(exc))
    return errors


def _race(main_parse, foreign_parse, rounds: int = 40) -> list[str]:
    """`main_parse` on this thread while two other threads parse with `foreign_parse`; this thread's errors."""
    stop = threading.Event()
    others = [threading.Thread(target=_parse_under_churn, args=(foreign_parse, 10**6, stop)) for _ in range(2)]
    for thread in others:
        thread.start()
    try:
        return _parse_under_churn(main_parse, rounds)
    finally:
        stop.set()
        for thread in others:
            thread.join()


def test_the_engines_parse_never_fails_while_foreign_threads_parse_with_plain_ast():
    plain = _race(ast.parse, ast.parse)
    if not plain:
        pytest.skip("this Python does not show cpython#106905 (plain ast.parse never failed under the same race)")
    assert all("recursion depth mismatch" in e for e in plain)
    assert _race(pyast.parse, ast.parse) == []  # same race, this thread through engine.pyast: the retry covers it


def test_the_engines_own_threads_never_meet():
    assert _race(pyast.parse, pyast.parse) == []


def test_it_is_ast_parse():
    assert ast.dump(pyast.parse(SOURCE)) == ast.dump(ast.parse(SOURCE))
    assert ast.dump(pyast.parse_expression("1 + x")) == ast.dump(ast.parse("1 + x", mode="eval").body)
    with pytest.raises(SyntaxError, match="line 1"):
        pyast.parse("def f(:\n", filename="child.py")
