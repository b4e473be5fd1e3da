"""Circle packing: the grader against hand-made packings of known sum, the seed through the real runner, a search."""

from __future__ import annotations

import asyncio
import json
import math

import pytest

from engine.loop.evaluation import run_agent
from engine.sandbox.process import ProcessSandbox
from tasks import make_task
from tasks.circle_packing.geometry import TOL
from tasks.circle_packing.task import BEST_KNOWN, CirclePackingTask
from tests.conftest import run_cli
from tests.engine.test_search_e2e import assert_budget_invariants, only_run, read

GAP = 0.1 * (math.sqrt(2.0) - 1.0)  # the circle that fits between four touching circles of radius 0.1


def grid_packing() -> tuple[list[list[float]], list[float]]:
    """A 5 x 5 grid of radius 0.1 and a 26th circle in the gap at (0.2, 0.2): sum 2.5 + 0.1 (sqrt 2 - 1)."""
    centers = [[0.1 + 0.2 * (k % 5), 0.1 + 0.2 * (k // 5)] for k in range(25)] + [[0.2, 0.2]]
    return centers, [0.1] * 25 + [GAP]


def grade(centers, radii):
    task = CirclePackingTask()
    dev = task.instances()[0]
    return task.grade(dev, json.dumps({"centers": centers, "radii": radii}).encode())


def test_a_hand_made_valid_packing_is_accepted_with_its_sum():
    g = grade(*grid_packing())
    assert g.valid, g.feedback
    assert g.metrics["sum_radii"] == pytest.approx(2.5 + GAP, abs=1e-12)
    assert g.metrics["sum_radii"] == pytest.approx(2.5414213562, abs=1e-9)
    task = CirclePackingTask()
    score = task.score(task.instances()[0], g.metrics, None)
    assert score == pytest.approx((2.5 + GAP) / BEST_KNOWN)
    assert task.score(task.instances()[0], g.metrics, {"sum_radii": 0.1}) == score  # absolute: no reference
    assert task.score(task.instances()[0], {"sum_radii": 2.7}, None) == 1.0  # capped


def test_an_overlapping_packing_is_refused():
    centers, radii = grid_packing()
    radii[-1] = GAP + 1e-6  # the gap circle now presses into its four neighbours
    g = grade(centers, radii)
    assert not g.valid and "overlap" in g.feedback and "25" in g.feedback


def test_the_tolerance_is_stated_and_applied():
    assert TOL == 1e-9
    centers, radii = grid_packing()
    assert grade(centers, [r + 4e-10 for r in radii]).valid  # within 1e-9 in total: accepted
    assert not grade(centers, [r + 2e-9 for r in radii]).valid  # beyond it: refused


@pytest.mark.parametrize(
    "change, why",
    [
        (lambda c, r: (c[:25], r[:25]), "shape"),  # 25 circles
        (lambda c, r: (c + [[0.5, 0.5]], r + [0.0]), "shape"),  # 27 circles
        (lambda c, r: ([[0.95, 0.5]] + c[1:], r), "leaves the unit square"),
        (lambda c, r: ([[-0.05, 0.5]] + c[1:], r), "leaves the unit square"),
        (lambda c, r: (c, [-0.01] + r[1:]), "negative radius"),
        (lambda c, r: (c, [float("nan")] + r[1:]), "not finite"),
        (lambda c, r: (c, [True] + r[1:]), "list of numbers"),
        (lambda c, r: (c, "0.1"), "list of numbers"),
    ],
)
def test_invalid_packings_are_refused(change, why):
    g = grade(*change(*grid_packing()))
    assert not g.valid and why in g.feedback, g.feedback


@pytest.mark.parametrize("answer, why", [(b"not json", "not JSON"), (b"[1, 2]", "centers and radii")])
def test_malformed_answers_are_refused(answer, why):
    task = CirclePackingTask()
    g = task.grade(task.instances()[0], answer)
    assert not g.valid and why in g.feedback


def test_the_seed_and_the_reference_are_valid_through_the_real_runner():
    task = make_task("circle_packing")
    dev = task.instances()[0]

    async def both():
        sandbox = ProcessSandbox()
        return await asyncio.gather(
            run_agent(task, sandbox, task.seed_files(), dev),
            run_agent(task, sandbox, task.reference_agents()["grid"], dev),
        )

    seed, grid = asyncio.run(both())
    assert seed.status == "ok", seed.feedback
    assert 2.0 < seed.metrics["sum_radii"] < 2.5
    assert grid.status == "ok" and grid.metrics["sum_radii"] == pytest.approx(2.5 + GAP, abs=1e-9)


@pytest.mark.slow
def test_a_one_instance_search_evaluates_each_node_once_then_expands(tmp_path):
    out = run_cli(
        "--task",
        "circle_packing",
        "--budget",
        "10",
        "--workers",
        "2",
        "--sandbox",
        "process",
        "--run-dir",
        str(tmp_path),
        "--quiet",
    )
    assert out.returncode == 0, out.stderr + out.stdout
    run = only_run(tmp_path)
    assert_budget_invariants(run, 10)
    assert (
        read(
            run,
            "SELECT max(c) FROM (SELECT count(*) AS c FROM evaluations WHERE split = 'dev' "
            'AND "repeat" = 0 GROUP BY node_id)',
        )[0][0]
        == 1
    )
    # the seed's second run, the noise probe (search/evidence.py), is the only repeat, and in the budget
    assert read(run, 'SELECT node_id, count(*) FROM evaluations WHERE "repeat" > 0 GROUP BY node_id') == [(0, 1)]
    assert read(run, "SELECT count(DISTINCT node_id) FROM evaluations WHERE split = 'dev'")[0][0] == 9  # + the probe
    final = read(run, "SELECT node_id FROM events WHERE kind = 'select_final'")[0][0]
    holdout = {n for (n,) in read(run, "SELECT node_id FROM evaluations WHERE split = 'holdout'")}
    assert holdout == {0, final}  # the rerun: the seed and the final node, once each
    assert read(run, "SELECT count(*) FROM reference_evaluations WHERE agent = 'grid'")[0][0] == 2
    assert "sum of radii" in out.stdout
