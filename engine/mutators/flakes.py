"""The pyflakes gate: a child that would die of a name error is never evaluated.

`pyflakes` (a kept static checker, never an import or exec of the code)
reports a name read where nothing binds it yet (`undefined name 'x'`) and a
local read before its assignment while an outer scope binds the same name
(`local variable 'x' ... referenced before assignment`). Most `error`
evaluations of the offline mutator's children were exactly this: a statement
moved or deleted leaves a later line reading a name no longer bound
(`UnboundLocalError`, `NameError`).

Two refinements keep the gate from refusing a program that runs:
- pyflakes reads a function top to bottom, so a read inside a loop of a name
  the same loop binds further down is reported, though a later iteration
  binds it first. Such a report is excused: some path binds the name.
- only problems the parent does not have count (by kind and name, not line):
  a seed that reads a name its host injects at run time stays usable, and
  so do its children, as long as they add no new unbound read.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from engine import pyast

LOOPS = (ast.For, ast.AsyncFor, ast.While)


def name_problems(source: str, path: str) -> list[tuple[str, str, int]]:
    """(kind, name, line) of every unbound read pyflakes finds in `source` that no loop excuses."""
    from pyflakes import checker, messages

    try:
        tree = pyast.parse(source, filename=path)
    except (SyntaxError, ValueError, RecursionError):
        return []  # compile errors are check_child's to report
    found = []
    for message in checker.Checker(tree, filename=path).messages:
        if isinstance(message, messages.UndefinedLocal):
            kind = "read before assignment"
        elif isinstance(message, messages.UndefinedName):
            kind = "undefined name"
        else:
            continue
        name = str(message.message_args[0])
        if not _bound_by_an_enclosing_loop(tree, name, message.lineno, message.col):
            found.append((kind, name, int(message.lineno)))
    return found


def _bound_by_an_enclosing_loop(tree: ast.Module, name: str, line: int, col: int) -> bool:
    """Is the read at (line, col) inside a loop whose body binds `name` (a later iteration may bind it first)?"""
    for loop in ast.walk(tree):
        if not isinstance(loop, LOOPS) or not _contains(loop, line, col):
            continue
        for node in ast.walk(loop):
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
                return True
    return False


def _contains(node: ast.stmt, line: int, col: int) -> bool:
    start = (node.lineno, node.col_offset)
    end = (node.end_lineno or node.lineno, node.end_col_offset or 0)
    return start <= (line, col) <= end


def new_name_problem(parent_files: Mapping[str, str], child_files: Mapping[str, str]) -> str | None:
    """One line naming the first unbound read the child's Python files have and the parent's do not, else None."""
    for path in sorted(p for p in child_files if p.endswith(".py")):
        source = child_files[path]
        if parent_files.get(path) == source:
            continue
        before = {(kind, name) for kind, name, _ in name_problems(parent_files.get(path, ""), path)}
        for kind, name, line in name_problems(source, path):
            if (kind, name) not in before:
                return f"pyflakes: {kind} {name!r} ({path} line {line}); it would fail when run"
    return None
