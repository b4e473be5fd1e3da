"""The `count` operator: which integers are counts, the multiplicative step and its bounds, and `const` leaving
counts alone."""

from __future__ import annotations

import ast

import numpy as np

from engine.mutators.ast_ops import op_const
from engine.mutators.count_ops import FACTORS, MAX_COUNT, count_sites, op_count, step
from engine.mutators.workspace import Workspace

PROGRAM = """
def search(f, seed=0, n_samples=40, *, restarts=3):
    rng = np.random.default_rng(seed)
    iterations = 200
    k = np.arange(26)
    xs = rng.uniform(-1.0, 1.0, size=64)
    r = np.zeros(26)
    for _ in range(50):
        x = rng.normal(0.0, 1.0)
    for i in range(26):
        r[i] = k[i] // 5
    best = min(f(x) for _ in range(1, 10))
    return best + 0.5 * 3
"""


def workspace(source: str) -> Workspace:
    return Workspace(ast.parse(source).body, None, "search", ("f",), "np", frozenset({"np"}))


def test_counts_are_range_bounds_sizes_and_names_that_count() -> None:
    found = sorted(site.node.value for site in count_sites(workspace(PROGRAM).stmts))
    # range(50), range(1, 10) stop, size=64, n_samples=40, restarts=3, iterations = 200; not np.arange(26),
    # np.zeros(26), the indexing loop's range(26), the seed's default 0, k // 5 or 3 in 0.5 * 3
    assert found == [3, 10, 40, 50, 64, 200]


def test_step_is_multiplicative_bounded_and_never_the_old_value() -> None:
    assert step(50, 2.0) == 100 and step(50, 0.5) == 25 and step(50, 1.5) == 75 and step(60, 2 / 3) == 40
    assert step(1, 0.5) is None and step(1, 1.5) == 2 and step(2, 2 / 3) == 1
    assert step(3, 0.5, low=3) is None  # range(2, 3): the stop stays above the start
    assert step(MAX_COUNT, 2.0) is None and step(MAX_COUNT - 1, 2.0) == MAX_COUNT


def test_one_count_moves_once_per_child_by_one_of_the_factors() -> None:
    rng = np.random.default_rng(0)
    for _ in range(30):
        ws = workspace("def search(f):\n    for _ in range(60):\n        f()\n")
        said = op_count(ws, None, rng)
        assert said is not None and said.startswith("count 60->")
        new = int(said.split("->")[1])
        assert any(step(60, factor) == new for factor in FACTORS)
        assert op_count(ws, None, rng) is None  # the only count already moved in this child


def test_const_leaves_counts_to_count() -> None:
    rng = np.random.default_rng(1)
    for _ in range(40):
        ws = workspace("def search(f):\n    iterations = 200\n    scale = 3\n    return scale * 0.5\n")
        op_const(ws, ws.sites(), rng)
        assert "iterations = 200" in ast.unparse(ws.stmts[0])
