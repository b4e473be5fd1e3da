"""Names bound where an expression is read, in pyflakes' reading order, and crossover's use of it."""

from __future__ import annotations

import ast

import numpy as np
from pyflakes import checker, messages

from engine.mutators.crossover import donor_grafts, op_crossover
from engine.mutators.reading_order import bound_before
from engine.mutators.region import find_region
from engine.mutators.scope import module_bindings
from engine.mutators.workspace import Workspace

SHAPES = """
def f(a, n):
    x = a + 1
    x = x + 2
    for i in range(n):
        y = i * x
        if y > 3:
            z = y
        else:
            w = y
    with open(a) as handle:
        text = handle.read()
    try:
        q = int(text)
    except ValueError as err:
        q = str(err)
    return q + later
    later = 1
"""


def _read(tree: ast.AST, name: str, nth: int = 0) -> ast.Name:
    reads = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    return sorted(reads, key=lambda n: (n.lineno, n.col_offset))[nth]


def test_each_read_sees_what_is_bound_above_it_in_reading_order() -> None:
    func = ast.parse(SHAPES).body[0]
    body = func.body
    assert bound_before(body, _read(func, "a")) == set()  # params are the caller's to add
    assert bound_before(body, _read(func, "x", 0)) == {"x"}  # `x = x + 2` reads the first x
    assert bound_before(body, _read(func, "n")) == {"x"}  # a loop's iterable: before its target
    assert bound_before(body, _read(func, "i")) == {"x", "i"}
    assert bound_before(body, _read(func, "y", 1)) == {"x", "i", "y"}  # `z = y`: z only once it is complete
    assert bound_before(body, _read(func, "y", 2)) == {"x", "i", "y", "z"}  # the else reads after the if's body
    assert bound_before(body, _read(func, "handle")) >= {"handle", "w", "z"}
    assert "err" in bound_before(body, _read(func, "err"))
    assert "later" not in bound_before(body, _read(func, "later"))
    assert bound_before(body, ast.Name("elsewhere", ast.Load())) is None


CROSS = """import numpy as np


def construct():
    # EVOLVE-BLOCK-START
    k = np.arange(26)
    row = k // 5
    col = k - 5 * row
    x = (col + 0.5) / 5.2
    y = (row + 0.5) / 5
    # EVOLVE-BLOCK-END
    return np.stack([x, y], axis=1)


def helper(size):
    scale = size * 2.0
    return scale


if __name__ == "__main__":
    row, col = 0, 0
"""


def test_crossover_never_grafts_a_read_of_a_local_above_its_binding() -> None:
    # grafts reading row, col, k (and `scale`, another function's local): a third of crossover's tries on
    # circle packing put one above `row = ...` or `col = ...`, pyflakes' undefined name the gate refused;
    # `row`/`col` are also module names (bound under __main__), so a read above the local is unbound too
    tree = ast.parse(CROSS)
    donor = {"agent.py": CROSS.replace("(col + 0.5) / 5.2", "(col + 0.5 + 0.25 * (row % 2)) / 5.2")}
    grafts = donor_grafts([donor], "agent.py", "construct", "np")
    assert any({"row", "col"} <= g.names for g in grafts)
    made = 0
    for seed in range(120):
        tree = ast.parse(CROSS)
        region = find_region(CROSS, tree, "construct")
        ws = Workspace.from_region(region, "construct", (), "np", frozenset(module_bindings(tree)[0]), grafts)
        if op_crossover(ws, ws.sites(), np.random.default_rng(seed)) is None:
            continue
        made += 1
        construct = tree.body[1]
        construct.body[: len(region.stmts)] = ws.stmts
        child = ast.fix_missing_locations(tree)
        unbound = (messages.UndefinedName, messages.UndefinedLocal)
        problems = [m for m in checker.Checker(child).messages if isinstance(m, unbound)]
        assert not problems, (ast.unparse(construct), problems)
    assert made > 30
