"""Which names a piece of Python binds and which it reads, from the AST alone.

Used by `validate` (a name read in a function but bound nowhere is a sure
NameError) and by crossover (a donor's subexpression may only be grafted where
every name it reads exists). The analysis is deliberately conservative, in
the spirit of pyflakes: a name bound anywhere in a function counts as bound
everywhere in it, so it never reports a false "undefined name"; it only
misses use-before-assignment.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator

MODULE_DUNDERS = frozenset(
    {
        "__name__",
        "__file__",
        "__doc__",
        "__spec__",
        "__loader__",
        "__package__",
        "__builtins__",
        "__annotations__",
        "__path__",
        "__cached__",
        "__dict__",
    }
)
BUILTIN_NAMES = frozenset(dir(builtins)) | MODULE_DUNDERS

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def walk_no_annotations(node: ast.AST) -> Iterator[ast.AST]:
    """Like `ast.walk`, but skips annotations (never evaluated with postponed annotations)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        for field, value in ast.iter_fields(current):
            if field in ("annotation", "returns", "type_comment"):
                continue
            if isinstance(value, ast.AST):
                stack.append(value)
            elif isinstance(value, list):
                stack.extend(v for v in reversed(value) if isinstance(v, ast.AST))


def _bound_by(node: ast.AST) -> list[str]:
    """Names one node binds in the scope it belongs to (not counting its children)."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
        return [node.id]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name.split(".")[0]) for a in node.names if a.name != "*"]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.ExceptHandler) and node.name:
        return [node.name]
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return list(node.names)
    if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
        return [node.name]
    if isinstance(node, ast.MatchMapping) and node.rest:
        return [node.rest]
    return []


def function_bindings(func: ast.AST) -> set[str]:
    """Every name bound anywhere inside `func` (parameters, assignments, nested defs, imports...)."""
    names: set[str] = set()
    for node in ast.walk(func):
        names.update(_bound_by(node))
    if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        names.discard(func.name)  # its own name lives in the enclosing scope
    return names


def module_bindings(tree: ast.Module) -> tuple[set[str], bool]:
    """Names bound at module level, and whether a star import makes the set unknowable."""
    names: set[str] = set()
    star = False
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            star = True
        names.update(_bound_by(node))
        if isinstance(node, _SCOPES):
            # `global x` inside a function binds x at module level
            for inner in ast.walk(node):
                if isinstance(inner, ast.Global):
                    names.update(inner.names)
            continue
        stack.extend(ast.iter_child_nodes(node))
    return names, star


def loaded_names(node: ast.AST) -> set[str]:
    """Names read anywhere under `node` (annotations excluded)."""
    return {n.id for n in walk_no_annotations(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def undefined_names(func: ast.FunctionDef | ast.AsyncFunctionDef, module_names: set[str]) -> list[tuple[str, int]]:
    """(name, line) for every name `func` reads that nothing binds, first occurrence each."""
    known = function_bindings(func) | module_names | BUILTIN_NAMES
    seen: dict[str, int] = {}
    for node in walk_no_annotations(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in known:
            line = getattr(node, "lineno", 0)
            seen[node.id] = min(line, seen.get(node.id, line))
    return sorted(seen.items(), key=lambda kv: (kv[1], kv[0]))


def numpy_alias(nodes: list[ast.stmt]) -> str | None:
    """The name under which `import numpy [as x]` binds numpy among these statements (not nested defs)."""
    stack: list[ast.AST] = list(nodes)
    while stack:
        node = stack.pop(0)
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "numpy":
                    return alias.asname or "numpy"
        if isinstance(node, _SCOPES):
            continue
        if isinstance(node, (ast.If, ast.Try, ast.TryStar, ast.ExceptHandler)):
            stack.extend(ast.iter_child_nodes(node))
    return None
