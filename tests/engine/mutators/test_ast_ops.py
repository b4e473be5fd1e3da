"""The insert operator keeps a program's types: no term is added to a tuple or built from a tuple parameter."""

from __future__ import annotations

import ast

import numpy as np

from engine.mutators.ast_ops import op_insert
from engine.mutators.workspace import Workspace

# a constructor in the style of the published circle-packing and minimization seeds (Clade's own text)
PROGRAM = """
def layout(box=(0.0, 1.0)):
    count = 12
    points = np.zeros((count, 2))
    for k in range(count):
        points[k] = [box[0] + 0.25 * k / count, 0.5]
    return points, 0.5 * count


def area(width, height):
    return width * height
"""


def _workspace() -> Workspace:
    return Workspace(ast.parse(PROGRAM).body, None, "area", ("width", "height"), "np", frozenset())


def test_insert_leaves_tuples_and_non_numeric_parameters_alone() -> None:
    inserted = 0
    for seed in range(200):
        ws = _workspace()
        said = op_insert(ws, ws.sites(), np.random.default_rng(seed))
        if said is None:
            continue
        inserted += 1
        layout, area = ws.stmts
        assert ast.unparse(layout) == ast.unparse(_workspace().stmts[0])  # its result is a tuple: untouched
        assert "box" not in ast.unparse(area) and "+" in ast.unparse(area.body[-1])
    assert inserted > 100


def test_insert_builds_terms_from_numeric_defaults() -> None:
    source = "def f(x, scale=2.0, label='a'):\n    return x * scale\n"
    seen = set()
    for seed in range(100):
        ws = Workspace(ast.parse(source).body, None, "g", (), "np", frozenset())
        if op_insert(ws, ws.sites(), np.random.default_rng(seed)) is not None:
            seen |= {n.id for n in ast.walk(ws.stmts[0].body[-1]) if isinstance(n, ast.Name)}
    assert {"x", "scale"} <= seen and "label" not in seen


def test_a_keep_the_best_test_keeps_its_direction() -> None:
    # `if value < best_value:` turned to `>` never updates the best: its start (None) reaches the evaluator
    from engine.mutators.ast_ops import op_swap

    source = (
        "def search(f, n=20):\n    best_x, best_value = None, float('inf')\n    for k in range(n):\n"
        "        value = f(k)\n        if value < best_value:\n            best_x, best_value = k, value\n"
        "    scale = 1 if n > 3 else 2\n    return best_x * scale\n"
    )
    guard, other = set(), set()
    for seed in range(200):
        ws = Workspace(ast.parse(source).body, None, "search", ("f", "n"), "np", frozenset({"np"}))
        line = op_swap(ws, ws.sites(), np.random.default_rng(seed))
        if line is None or not line.startswith("swap_op"):
            continue
        change = line.split(" in ")[0].removeprefix("swap_op ")
        (guard if "value" in line else other).add(change)
    assert guard == {"<-><="}, guard  # the guard only gains its equality
    assert {">-><", ">->=="} & other, other  # a comparison that guards no update may still turn


def test_const_keeps_an_integer_literal_an_integer() -> None:
    # OpenEvolve's signal_processing: `window_size = 90` -> `90.0` or `91.14`, then
    # "expected a sequence of integers or a single integer, got '90.0'" in its evaluator
    from engine.mutators.ast_ops import op_const

    source = (
        "def smooth(signal):\n    window = 90\n    scale = 0.5\n"
        "    return np.convolve(signal, np.ones(window) / window) * scale\n"
    )
    written = {"window": set(), "scale": set()}
    for seed in range(200):
        stmts = ast.parse(source).body
        ws = Workspace(stmts, None, "smooth", ("signal",), "np", frozenset({"np"}))
        if op_const(ws, ws.sites(), np.random.default_rng(seed)) is None:
            continue
        for stmt in ws.stmts[0].body[:2]:
            value = ast.literal_eval(stmt.value)
            written[stmt.targets[0].id].add(type(value))
            if stmt.targets[0].id == "window":
                scope: dict = {"np": np}
                exec(compile(ast.fix_missing_locations(ast.Module(ws.stmts, [])), "child", "exec"), scope)
                if value > 0:
                    scope["smooth"](np.ones(200))  # a TypeError here is the bug
    assert written["window"] == {int} and written["scale"] == {float}
