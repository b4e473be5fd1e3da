"""swap_stmt never moves a read of a function's local above its first assignment, module bindings or not."""

from __future__ import annotations

import ast

import numpy as np

from engine.mutators.scope import module_bindings
from engine.mutators.stmt_ops import op_swap_stmt
from engine.mutators.workspace import Workspace

# the shape of the published minimization seeds: the fixed tail binds x, y, value at module level too
PROGRAM = """
import numpy as np


def search(steps=50):
    best = 10.0
    for _ in range(steps):
        x = np.random.uniform(-1, 1)
        y = np.random.uniform(-1, 1)
        value = x * y + y
        y = y * 0.5
        if value < best:
            best = value
    return best


if __name__ == "__main__":
    x, y, value = 0, 0, search()
"""


def test_swaps_never_read_a_local_before_it_is_bound() -> None:
    tree = ast.parse(PROGRAM)
    swaps = 0
    for seed in range(150):
        stmts = ast.parse(PROGRAM).body
        ws = Workspace(stmts[1:2], None, "search", (), "np", frozenset(module_bindings(tree)[0]))
        if op_swap_stmt(ws, ws.sites(), np.random.default_rng(seed)) is None:
            continue
        swaps += 1
        scope: dict = {}
        exec(compile(ast.fix_missing_locations(ast.Module([stmts[0], *ws.stmts], [])), "child", "exec"), scope)
        scope["search"](5)  # an UnboundLocalError here is the bug
    assert swaps > 0


def test_delete_never_removes_the_only_binding_of_a_name_still_read() -> None:
    from engine.mutators.stmt_ops import op_delete

    source = (
        "def make(n=3):\n    pts = np.zeros((n, 3))\n    pts[:, 2] = 0.1\n    extra = 1.0\n    return pts\n\n\n"
        "if __name__ == '__main__':\n    pts = make()\n"
    )
    tree = ast.parse(source)
    deleted = set()
    for seed in range(60):
        stmts = ast.parse(source).body
        ws = Workspace(stmts[:1], None, "make", (), "np", frozenset(module_bindings(tree)[0]))
        said = op_delete(ws, ws.sites(), np.random.default_rng(seed))
        if said is not None:
            deleted.add(said.split("`")[1].split(" =")[0].split("[")[0])
            assert "pts = np.zeros" in ast.unparse(ws.stmts[0])
    assert "extra" in deleted  # a binding nothing reads may still go


def test_delete_never_leaves_a_later_line_reading_a_name_before_its_binding() -> None:
    # OpenEvolve's function_minimization shape: `best_x` is bound again in the loop, but the line after its
    # first binding reads it; deleting that binding is pyflakes' undefined name (the gate's refusal)
    from engine.mutators.stmt_ops import op_delete

    source = (
        "def search(iterations=40):\n    best_x = np.random.uniform(-1, 1)\n    best_value = f(best_x)\n"
        "    scale = 2.0\n    for _ in range(iterations):\n        x = best_x + np.random.normal()\n"
        "        if f(x) < best_value:\n            best_x, best_value = x, f(x)\n    return best_x\n\n\n"
        "def f(x):\n    return x * x\n"
    )
    tree = ast.parse(source)
    deleted = set()
    for seed in range(80):
        stmts = ast.parse(source).body
        ws = Workspace(stmts[:1], None, "search", (), "np", frozenset(module_bindings(tree)[0]))
        said = op_delete(ws, ws.sites(), np.random.default_rng(seed))
        if said is not None:
            deleted.add(said.split("`")[1].split(" =")[0])
            scope: dict = {"np": np}
            child = ast.Module([*ws.stmts, *ast.parse(source).body[1:]], [])
            exec(compile(ast.fix_missing_locations(child), "child", "exec"), scope)
            scope["search"](3)  # a NameError or UnboundLocalError here is the bug
    assert "best_x" not in deleted and "best_value" not in deleted and "scale" in deleted


def test_delete_keeps_what_the_code_after_a_marked_region_reads() -> None:
    # circle packing's seed: `return max_radii(np.stack([x, y]))` follows the EVOLVE-BLOCK; deleting `x = ...`
    # was refused by the gate in every try (the def around a marked region is the parent's node, so the
    # deletion looked harmless there)
    from engine.mutators.region import find_region
    from engine.mutators.stmt_ops import op_delete

    source = (
        "import numpy as np\n\n\ndef construct():\n    # EVOLVE-BLOCK-START\n    k = np.arange(6)\n"
        "    spare = 2.0\n    x = k / 6.0\n    y = k / 7.0\n    # EVOLVE-BLOCK-END\n    return np.stack([x, y])\n"
    )
    deleted = set()
    for seed in range(60):
        tree = ast.parse(source)
        region = find_region(source, tree, "construct")
        ws = Workspace.from_region(region, "construct", (), "np", frozenset(module_bindings(tree)[0]), ())
        said = op_delete(ws, ws.sites(), np.random.default_rng(seed))
        if said is not None:
            deleted.add(said.split("`")[1].split(" =")[0])
    assert deleted == {"spare"}


def test_delete_never_leaves_the_returned_best_bound_only_to_none() -> None:
    # the random search: deleting the loop, or the `if` that keeps the best, returns (None, None, inf);
    # OpenEvolve's evaluator then fails on float(None): every such delete failed in issue 30's table
    from engine.mutators.stmt_ops import op_delete

    source = (
        "def random_search(f, seed=0):\n    rng = np.random.default_rng(seed)\n    spare = 3\n"
        "    best_x, best_value = None, np.inf\n    for _ in range(50):\n        x = rng.uniform(-5.0, 5.0)\n"
        "        value = f(x)\n        if value < best_value:\n            best_x, best_value = x, value\n"
        "    return best_x, best_value\n"
    )
    tree = ast.parse(source)
    deleted = set()
    for seed in range(80):
        stmts = ast.parse(source).body
        ws = Workspace(stmts[:1], None, "random_search", ("f",), "np", frozenset(module_bindings(tree)[0]))
        said = op_delete(ws, ws.sites(), np.random.default_rng(seed))
        if said is not None:
            deleted.add(said.split("`")[1].split(" ")[0])
            scope: dict = {"np": np}
            exec(compile(ast.fix_missing_locations(ast.Module(ws.stmts, [])), "child", "exec"), scope)
            assert scope["random_search"](lambda x: x * x)[0] is not None
    assert "spare" in deleted and not deleted & {"for", "if"}


def test_a_swap_never_moves_a_clamp() -> None:
    """ShinkaEvolve's circle packing: `centers = np.clip(centers, 0.01, 0.99)` swapped with the loop placing the
    outer ring clipped the centres before they were placed, swapped with `radii = compute_max_radii(centers)`
    sized the circles on centres not yet clipped (21 of 31 swaps touching the clip failed in the published
    examples' evaluators). Other swaps still happen."""
    source = (
        "def place(n=6):\n    centers = np.zeros((n, 2))\n    scale = 0.3\n    scale = scale + 0.1\n"
        "    w = scale * 2.0\n    for i in range(n):\n"
        "        centers[i] = [0.5 + scale * np.cos(i), 0.5 + w * np.sin(i)]\n"
        "    centers = np.clip(centers, 0.01, 0.99)\n    radii = 0.1 * np.abs(centers)\n    return centers, radii\n"
    )
    seen = set()
    for seed in range(60):
        ws = Workspace(ast.parse(source).body, None, "place", (), "np", frozenset({"np"}))
        said = op_swap_stmt(ws, ws.sites(), np.random.default_rng(seed))
        if said is None:
            continue
        seen.add(said)
        text = ast.unparse(ws.stmts[0])
        assert text.index("for i in range(n)") < text.index("np.clip(centers") < text.index("radii ="), said
    assert seen  # `scale = scale + 0.1` and `w = scale * 2.0` still swap: only the clamp stays where it is
