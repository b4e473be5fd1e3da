"""scripts/bench_search.py: the simulated landscapes, the search loop, and a tiny end-to-end run (issue 5)."""

from __future__ import annotations

import importlib.util
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import search
from search.decisions import Evaluate, Expand

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "bench_search.py"
spec = importlib.util.spec_from_file_location("bench_search", SCRIPT)
bench = importlib.util.module_from_spec(spec)
sys.modules["bench_search"] = bench
spec.loader.exec_module(bench)

NUMBER = r"[+-]?\d+\.\d+"


# ----- the landscape ------------------------------------------------------------------------
def children_of(world, parent: int, count: int) -> list[int]:
    return [world.child(parent)[0] for _ in range(count)]


def test_a_seed_fixes_the_landscape_and_every_evaluation():
    a, b = bench.World(bench.FAMILIES["smooth"], 7), bench.World(bench.FAMILIES["smooth"], 7)
    first = children_of(a, 0, 5) + children_of(a, 3, 5)
    second = children_of(b, 0, 5) + children_of(b, 3, 5)
    assert [a.q[i] for i in first] == [b.q[i] for i in second]
    assert [a.valid[i] for i in first] == [b.valid[i] for i in second]
    assert [a.score(i, j) for i in first for j in range(16)] == [b.score(i, j) for i in second for j in range(16)]
    # a child is fixed by its path, not by the order in which the tree grew
    c = bench.World(bench.FAMILIES["smooth"], 7)
    late = children_of(c, 0, 4)  # root children 0..3 first, then node 3's, then the root's fifth
    grand = children_of(c, late[2], 5)
    fifth = c.child(0)[0]
    assert [c.q[i] for i in grand] == [a.q[i] for i in first[5:]]
    assert c.q[fifth] == a.q[first[4]]
    other = bench.World(bench.FAMILIES["smooth"], 8)
    assert [other.q[i] for i in children_of(other, 0, 5)] != [a.q[i] for i in first[:5]]


@pytest.mark.parametrize("q", [0.1, 0.5, 0.83])
def test_an_evaluation_is_bernoulli_of_the_hidden_quality(q):
    world = bench.World(bench.FAMILIES["smooth"], 1)
    nodes = children_of(world, 0, 2000)
    for node in nodes:
        world.q[node] = q
    scores = np.array([world.score(node, j) for node in nodes for j in range(16)])
    assert set(np.unique(scores)) <= {0.0, 1.0}
    assert abs(scores.mean() - q) < 4 * math.sqrt(q * (1 - q) / len(scores))


def step_profile(family: str, seed: int = 0, count: int = 4000):
    world = bench.World(bench.FAMILIES[family], seed)
    nodes = children_of(world, 0, count)
    q = np.array([world.q[i] for i in nodes])
    valid = np.array([world.valid[i] for i in nodes])
    return world, nodes, q, valid


def test_smooth_most_edits_hurt_a_little_a_few_help_a_lot():
    world, _, q, valid = step_profile("smooth")
    root = world.q[0]
    assert 0.10 < 1 - valid.mean() < 0.20  # p_break 0.15
    assert (q < root).mean() > 0.6
    assert np.median(root - q[q < root]) < 0.05  # a little
    assert q.mean() < root
    assert q.max() > root + 0.15  # a lot, rarely
    assert (q > root + 0.1).mean() < 0.05


def test_needle_almost_every_edit_hurts_and_a_rare_one_jumps():
    world, _, q, valid = step_profile("needle")
    root = world.q[0]
    assert 0.25 < 1 - valid.mean() < 0.35
    assert (q < root).mean() > 0.9
    assert q.max() > root + 0.3


def best_first(world, start: int, steps: int) -> float:
    """An oracle climber: always expand the valid node of highest hidden q; the best q found."""
    frontier = [start]
    for _ in range(steps):
        parent = max(frontier, key=lambda i: world.q[i])
        node, valid = world.child(parent)
        if valid:
            frontier.append(node)
    return max(world.q[i] for i in frontier)


def test_deceptive_the_lineage_that_starts_worse_reaches_far_higher():
    family = bench.FAMILIES["deceptive"]
    world = bench.World(family, 3)
    starts = children_of(world, 0, 400)
    kinds = np.array([world.kind[i] for i in starts])
    names = [k.name for k in family.kinds]
    trap, deep = names.index("trap"), names.index("deep")
    assert 0.5 < (kinds == trap).mean() < 0.7
    q = np.array([world.q[i] for i in starts])
    assert np.median(q[kinds == trap]) > np.median(q[kinds == deep]) + 0.1  # a climber sees the trap first
    assert np.median(q[kinds == deep]) < world.q[0]
    first_trap = next(i for i in starts if world.kind[i] == trap and world.valid[i])
    first_deep = next(i for i in starts if world.kind[i] == deep and world.valid[i])
    trap_best = best_first(world, first_trap, 300)
    deep_best = best_first(world, first_deep, 300)
    assert trap_best <= 0.5  # the plateau
    assert deep_best > 0.7
    assert all(world.kind[i] in (trap, deep) for i in range(1, len(world)))
    assert all(world.q[i] <= 0.5 for i in range(1, len(world)) if world.kind[i] == trap)


# ----- the search loop -----------------------------------------------------------------------
def test_a_search_is_deterministic_for_a_seed():
    one, tree_a, _ = bench.simulate("hgm", "smooth", 200, 5)
    two, tree_b, _ = bench.simulate("hgm", "smooth", 200, 5)
    one.seconds = two.seconds = 0.0
    assert one == two
    n = tree_a.n
    assert tree_b.n == n
    for name in ("parent", "valid", "s", "f", "n_evals"):
        assert np.array_equal(getattr(tree_a, name)[:n], getattr(tree_b, name)[:n])


@pytest.mark.parametrize("policy", sorted(search.POLICIES))
def test_the_budget_is_spent_exactly_and_the_root_goes_first(policy):
    outcome, tree, world = bench.simulate(policy, "deceptive", 150, 2)
    assert not outcome.error
    assert tree.in_flight == 0
    assert tree.evaluations_done == outcome.evaluations
    if not outcome.early_stop:
        assert outcome.evaluations == 150
    assert tree.n_evals[0] == 16  # the seed on every dev instance first, as the engine does
    assert len(world) == tree.n
    assert 0.0 <= outcome.final_q <= 1.0
    assert outcome.regret >= 0.0
    assert outcome.best_evaluated <= outcome.best_tree + 1e-12


class Probe:
    """Records what the loop shows it; evaluates the oldest open node, else expands the root."""

    name = "probe"

    def __init__(self) -> None:
        self.max_in_flight = 0
        self.budgets = set()

    def decide(self, view, rng):
        self.max_in_flight = max(self.max_in_flight, view.in_flight)
        self.budgets.add(view.budget)
        assert view.can_expand and view.pending_expansions == 0
        open_nodes = view.open_nodes
        if len(open_nodes):
            node = int(open_nodes[0])
            return Evaluate(node, view.untried(node)[0])
        return Expand(0)

    def select_final(self, view, rng):
        return None

    def scores(self, view):
        return np.arange(view.n, dtype=float)


def test_workers_bound_the_evaluations_in_flight(monkeypatch):
    probes = []

    def make():
        probes.append(Probe())
        return probes[-1]

    monkeypatch.setitem(search.POLICIES, "probe", make)
    for workers in (1, 3):
        outcome, _, _ = bench.simulate("probe", "smooth", 90, 0, workers=workers)
        assert outcome.evaluations == 90
        assert probes[-1].max_in_flight == workers - 1  # one slot is free whenever it is asked
        assert probes[-1].budgets == {90}
        assert outcome.no_final and outcome.final_q == bench.FAMILIES["smooth"].root_q
        assert outcome.score_source == "scores"


def test_a_policy_that_gives_up_stops_early(monkeypatch):
    class Lazy(Probe):
        def decide(self, view, rng):
            return None

    monkeypatch.setitem(search.POLICIES, "lazy", Lazy)
    outcome, _, _ = bench.simulate("lazy", "smooth", 100, 0)
    assert outcome.early_stop and outcome.evaluations == 16  # the root's, then nothing


def test_rank_correlation_uses_the_true_clade_metaproductivity():
    class Exact(Probe):
        def __init__(self, world) -> None:
            super().__init__()
            self.world = world

        def scores(self, view):
            return self.cmp

    outcome, tree, world = bench.simulate("hgm", "smooth", 300, 1)
    assert outcome.score_source == "clade mean S/(S+F)"
    assert -1.0 <= outcome.rho <= 1.0
    # a policy whose score is the true CMP itself gets rho = 1
    n = tree.n
    cmp = np.full(n, np.nan)
    for node in range(n):
        desc = [i for i in range(node + 1, n) if world.valid[i] and is_descendant(tree, i, node)]
        if desc:
            cmp[node] = np.mean([world.q[i] for i in desc])
    exact = Exact(world)
    exact.cmp = np.nan_to_num(cmp, nan=-1.0)
    rho, source = bench.rank_correlation(exact, tree, world)
    assert source == "scores" and rho == pytest.approx(1.0)


def is_descendant(tree, node: int, ancestor: int) -> bool:
    while node >= 0:
        node = int(tree.parent[node])
        if node == ancestor:
            return True
    return False


def test_variants_pass_options_to_make_policy():
    assert bench.build_policy("hgm+alpha=0.8").alpha == 0.8
    staged = bench.build_policy("hgm+stages=3:0.4")
    assert isinstance(staged, search.Staged) and staged.first == 3 and staged.threshold == 0.4
    assert isinstance(bench.innermost(staged), search.HGMPolicy)
    assert not isinstance(bench.build_policy("dgm+stages=none"), search.Staged)
    assert isinstance(bench.build_policy("dgm"), search.Staged)  # DGM's own stages by default
    with pytest.raises(ValueError):
        bench.build_policy("hgm+alpha")
    with pytest.raises(ValueError):
        bench.build_policy("hgm+no_such_option=1")
    outcome, _, _ = bench.simulate("hgm+stages=3:0.4", "smooth", 120, 0)
    assert not outcome.error and outcome.evaluations == 120
    assert outcome.score_source == "clade mean S/(S+F)"


def test_mean_ci_is_the_normal_interval():
    m, h = bench.mean_ci([1.0, 2.0, 3.0, 4.0, float("nan")])
    assert m == 2.5
    assert h == pytest.approx(1.96 * np.std([1, 2, 3, 4], ddof=1) / 2)


@pytest.mark.parametrize("shape", ["full", "mixed"])
def test_decision_time_trees(shape):
    tree, q = bench.grow(3000, shape, 0)
    n = tree.n
    valid = tree.valid[:n]
    assert n == 3000 and len(q) == n
    assert np.all(tree.n_evals[:n][~valid] == 0)
    if shape == "full":
        assert np.all(tree.n_evals[:n][valid] == 16) and not tree.open_mask[:n].any()
    else:
        assert tree.open_mask[:n].sum() > n // 2
    assert tree.S[0] + tree.F[0] == pytest.approx(tree.evaluations_done)
    times, kinds = bench.time_decisions("hgm", tree, q, shape, 5, 0)
    assert len(times) == 5 and sum(kinds.values()) == 5
    if shape == "full":
        assert kinds["expand"] == 5 and not tree.open_mask[: tree.n].any()


# ----- end to end ----------------------------------------------------------------------------
@pytest.mark.slow
def test_tiny_run_prints_the_tables_the_verdicts_and_decision_times(tmp_path):
    out_md = tmp_path / "bench.md"
    args = [
        "--quick",
        "--seeds",
        "2",
        "--budgets",
        "100",
        "800",
        "--sizes",
        "2000",
        "--decisions",
        "5",
        "--jobs",
        "2",
        "--markdown",
        str(out_md),
    ]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    run = subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    text = run.stdout
    policies = sorted(search.POLICIES)
    assert "settings: policies" in text and "2 seeds" in text
    cell = rf"({NUMBER}) \[({NUMBER}),({NUMBER})\] ({NUMBER}), +({NUMBER}|n/a)"
    for family in bench.FAMILIES:
        assert f"Family {family}:" in text
        for policy in policies:
            row = re.search(rf"^{policy} +{cell} +{cell}$", text, re.MULTILINE)
            assert row, f"no row for {policy} in {family}:\n{text}"
        assert re.search(rf"^verdict {family}", text, re.MULTILINE)
    for row in re.finditer(rf"^\S+ +{cell} +{cell}$", text, re.MULTILINE):
        for k in (0, 5):
            mean, low, high, regret, rho = row.groups()[k : k + 5]
            assert 0.0 <= float(mean) <= 1.0 and float(low) <= float(mean) <= float(high)
            assert 0.0 <= float(regret) <= 1.0
            assert rho == "n/a" or -1.0 <= float(rho) <= 1.0
    assert re.search(
        r"^summary: hgm selects a higher mean hidden quality than .* on \d of \d families", text, re.MULTILINE
    ), text
    for policy in policies:
        line = re.search(
            rf"^{policy} +({NUMBER}) \(.*\) +({NUMBER}) \(.*\) +(met|NOT met) \(({NUMBER}) ms\)$", text, re.MULTILINE
        )
        assert line, f"no decision time for {policy}:\n{text}"
        full, mixed, verdict, worst = float(line[1]), float(line[2]), line[3], float(line[4])
        assert 0 < full < 1000 and 0 < mixed < 1000
        assert worst == pytest.approx(max(full, mixed), abs=0.011)
        assert (verdict == "met") == (worst < 5.0) or abs(worst - 5.0) < 0.01
    assert re.search(r"^decision time at 2000 nodes: ", text, re.MULTILINE)
    assert re.search(r"^wall time \d+ s", text, re.MULTILINE)
    markdown = out_md.read_text()
    assert "python3 scripts/bench_search.py --quick --seeds 2" in markdown
    assert "| policy | B=100 | B=800 |" in markdown and "## Decision time" in markdown
