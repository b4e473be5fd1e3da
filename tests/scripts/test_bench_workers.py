"""scripts/bench_workers.py: the virtual clock of bench_search's loop, the durations, the paired verdict."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]


def load(name: str):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


bench_search = load("bench_search")
bench = load("bench_workers")


def test_the_clock_finishes_the_shortest_first_and_jumps_to_each_end():
    seconds = {(1, 0): 5.0, (2, 0): 1.0, (3, 0): 3.0, (4, 0): 2.0, (5, 0): 5.0}
    flight = bench_search.InFlight("random", np.random.default_rng(0), lambda node, i: seconds[node, i])
    for node in (1, 2, 3, 4):
        flight.start(node, 0)
    assert flight.finish() == (2, 0) and flight.now == 1.0
    flight.start(5, 0)  # started at 1, so it ends at 1 + 5 = 6, after node 1's 5
    order = [flight.finish()[0] for _ in range(4)]
    assert order == [4, 3, 1, 5]
    assert flight.now == 6.0 and flight.busy == 16.0 and len(flight) == 0


def test_w_workers_spend_exactly_the_budget_and_one_worker_ignores_the_clock():
    timing = bench.LogNormalTime()
    out, tree, _ = bench_search.simulate("hgm", "smooth", 100, 3, workers=16, duration=timing)
    assert tree.evaluations_done == 100 and not out.early_stop
    assert 0 < out.busy <= 16 * out.clock
    plain, _, _ = bench_search.simulate("hgm", "smooth", 100, 3, workers=1)
    timed, _, _ = bench_search.simulate("hgm", "smooth", 100, 3, workers=1, duration=timing)
    assert timed.final_q == plain.final_q and timed.nodes == plain.nodes
    assert abs(timed.busy - timed.clock) < 1e-9  # one worker is never idle


def test_durations_are_lognormal_and_fixed_by_the_landscape():
    world = bench_search.World(bench_search.FAMILIES["smooth"], 0)
    timing = bench.LogNormalTime(sigma=0.75)
    d = np.array([timing(world, 0, i) for i in range(2000)])
    assert abs(np.median(d) - 1.0) < 0.1
    assert abs(np.log(d).std() - 0.75) < 0.05
    assert timing(world, 0, 7) == bench.LogNormalTime(sigma=0.75)(bench_search.World(world.family, 0), 0, 7)
    slow_failures = bench.LogNormalTime(sigma=0.75, fail_factor=3.0)
    i = next(i for i in range(64) if world.score(0, i) == 0.0)
    assert slow_failures(world, 0, i) == 3.0 * timing(world, 0, i)


def test_the_verdict_uses_the_paired_difference():
    base = {s: 0.5 + 0.1 * s for s in range(6)}  # seeds differ a lot, the pairs little
    worse = {s: v - 0.01 for s, v in base.items()}
    diff, se, n = bench.paired(base, worse)
    assert n == 6 and abs(diff + 0.01) < 1e-12 and se < 1e-9
    results = {("p", "smooth", 100, w): runs for w, runs in ((1, base), (16, worse), (64, base))}
    _, losses = bench.quality_tables(results, ["p"], ["smooth"], [100], [1, 16, 64], markdown=False)
    assert len(losses["p"]) == 1 and "W=16" in losses["p"][0]
