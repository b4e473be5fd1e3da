"""Statement operators of the offline mutator: delete one statement, swap two neighbours.

Neither ever touches a `return`, `raise`, `break`/`continue`, a definition, an
import or a docstring, and neither empties a block. A swap is made only when
it changes what the code computes (the two statements share a name one of
them writes) and cannot read a variable before the statement that first binds
it (a conservative data-flow check within one block), and never moves a
clamp (`x = np.clip(x, ...)`, `np.maximum`, `np.minimum`).
"""

from __future__ import annotations

import ast

import numpy as np

from engine.mutators.scope import function_bindings, loaded_names
from engine.mutators.sites import Body, Sites, call_name
from engine.mutators.workspace import Workspace, short

CLAMPS = frozenset({"clip", "maximum", "minimum"})
_FIXED = (
    ast.Return,
    ast.Raise,
    ast.Break,
    ast.Continue,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Import,
    ast.ImportFrom,
    ast.Global,
    ast.Nonlocal,
    ast.Pass,
)


def _movable(stmt: ast.stmt) -> bool:
    if isinstance(stmt, _FIXED):
        return False
    return not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant))


def _writes(stmt: ast.stmt) -> set[str]:
    return function_bindings(ast.Module(body=[stmt], type_ignores=[]))


def _is_clamp(stmt: ast.stmt) -> bool:
    """Does the statement clamp a name to itself (`centers = np.clip(centers, 0.01, 0.99)`, `r = np.maximum(r,
    0.0)`)? A clamp is never swapped: moved before a write of its name or
    after a read of it, the constraint it enforces no longer holds there (ShinkaEvolve's circle packing
    clipped its centres before placing the outer ring, or computed its radii from centres not yet clipped:
    21 of 31 swaps touching the clip failed in the published examples' evaluators, 4 of 33 other swaps)."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return False
    return call_name(stmt.value) in CLAMPS and stmt.targets[0].id in loaded_names(stmt.value)


def _breaks_a_read(ws: Workspace, body: Body, i: int) -> bool:
    """Deleting body.stmts[i] would leave a name its function still reads

    - bound nowhere in the function: the read falls through to a module name bound only under `if __name__ ==
      "__main__":` (which pyflakes accepts), a NameError when the evaluator imports the program, or is
      pyflakes' undefined name (the code after a marked region reading what the region computed: `x = ...`
      deleted, `return f(x)` after the block); or
    - bound only to None: a random search's `best_x = None` before the loop whose `best_x = x` the deletion
      takes (the loop or its `if`); the child then returns None where the evaluator wants a number (issue 30:
      every delete of that shape failed in OpenEvolve's evaluator, `float() argument must be ... not
      'NoneType'`)."""
    if body.func is None:
        return False
    written = _writes(body.stmts[i])
    if not written:
        return False
    stmt = body.stmts.pop(i)
    try:
        scope = ws.live(body.func)  # after the pop: a marked region's scope is a new list of the statements
        bound = function_bindings(scope) | set(ws.preamble) | set(ws.params(body.func))
        read = written & loaded_names(scope)
        return bool(read - bound) or any(_only_none(scope, name) for name in read)
    finally:
        body.stmts.insert(i, stmt)


def _only_none(scope: ast.AST, name: str) -> bool:
    """Is every binding of `name` in `scope` an assignment of the constant None (and is there one)?"""
    stores = sum(
        1 for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
    )
    nones = 0
    for node in ast.walk(scope):
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            pairs = [(target, node.value)]
            if isinstance(target, (ast.Tuple, ast.List)) and isinstance(node.value, (ast.Tuple, ast.List)):
                pairs = list(zip(target.elts, node.value.elts, strict=False))
            nones += sum(
                1
                for t, v in pairs
                if isinstance(t, ast.Name) and t.id == name and isinstance(v, ast.Constant) and v.value is None
            )
    return stores > 0 and nones == stores


def _read_first_after(ws: Workspace, body: Body, i: int) -> bool:
    """Deleting body.stmts[i] would make a later statement of the same block read a name it wrote before
    anything binds it (`best = f(x0)` deleted, then `best` read on the next line): pyflakes' undefined name,
    which the gate refuses, so the attempt is wasted (issue 30 measured `delete` refused in 72 % of tries)."""
    written = _writes(body.stmts[i])
    if not written:
        return False
    bound = _bound_before(ws, body, i)
    for stmt in body.stmts[i + 1 :]:
        if (written & loaded_names(stmt)) - bound:
            return True
        bound |= _writes(stmt)
    return False


def op_delete(ws: Workspace, sites: Sites, rng: np.random.Generator) -> str | None:
    options = [
        (body, i)
        for body in sites.bodies
        if len(body.stmts) - body.start >= 2
        for i in range(body.start, len(body.stmts))
        if _movable(body.stmts[i]) and not _breaks_a_read(ws, body, i) and not _read_first_after(ws, body, i)
    ]
    if not options:
        return None
    body, i = options[int(rng.integers(len(options)))]
    removed = body.stmts.pop(i)
    return f"delete `{short(removed, 40)}`"


def _bound_before(ws: Workspace, body: Body, i: int) -> set[str]:
    names = set(ws.module_names)
    if body.func is not None:
        # a name the function assigns is local to it, whatever the module binds (`x, y = run()` under
        # `if __name__ == "__main__":`): read before its first assignment, it is an UnboundLocalError
        declared = {
            n for node in ast.walk(body.func) if isinstance(node, (ast.Global, ast.Nonlocal)) for n in node.names
        }
        names -= function_bindings(body.func) - declared
        names |= {a.arg for a in ast.walk(body.func.args) if isinstance(a, ast.arg)}
    names |= set(ws.preamble) | set(ws.params(body.func))
    for stmt in body.stmts[:i]:
        names |= _writes(stmt)
    return names


def op_swap_stmt(ws: Workspace, sites: Sites, rng: np.random.Generator) -> str | None:
    options: list[tuple[Body, int]] = []
    for body in sites.bodies:
        for i in range(body.start, len(body.stmts) - 1):
            a, b = body.stmts[i], body.stmts[i + 1]
            if not (_movable(a) and _movable(b)):
                continue
            wa, wb = _writes(a), _writes(b)
            ra, rb = loaded_names(a), loaded_names(b)
            if not (wa & (rb | wb) or wb & ra):
                continue  # independent statements: swapping changes nothing
            if (wa & rb) - _bound_before(ws, body, i):
                continue  # b would read a name before a first binds it
            if _is_clamp(a) or _is_clamp(b):
                continue  # a clamp holds where it is: after the writes it guards, before the reads
            options.append((body, i))
    if not options:
        return None
    body, i = options[int(rng.integers(len(options)))]
    body.stmts[i], body.stmts[i + 1] = body.stmts[i + 1], body.stmts[i]
    return f"swap_stmt `{short(body.stmts[i], 25)}` <-> `{short(body.stmts[i + 1], 25)}`"
