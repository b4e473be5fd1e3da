"""`--island-stagnation` in a small offline search: the `island_spawn` event is written once per new island,
with its reason, when the new island makes its first expansion (search/openevolve.py)."""

from __future__ import annotations

import json

import pytest

from engine.front.cli import build_parser
from engine.front.run import run_from_args
from tests.conftest import small_instances
from tests.engine.test_search_e2e import only_run, read


@pytest.mark.slow
def test_an_offline_openevolve_run_records_the_islands_it_spawns(tmp_path):
    instances = small_instances(tmp_path / "instances.json", n_dev=1, n_holdout=1, n_items=30)
    args = ["--policy", "openevolve", "--island-stagnation", "1", "--budget", "9", "--workers", "1"]
    args += ["--sandbox", "process", "--instances", str(instances), "--run-dir", str(tmp_path / "runs"), "--quiet"]
    assert run_from_args(build_parser().parse_args(args)) == 0
    run = only_run(tmp_path / "runs")
    spawns = [json.loads(d) for (d,) in read(run, "SELECT detail FROM events WHERE kind = 'island_spawn' ORDER BY seq")]
    assert spawns, "no island spawned in 9 evaluations with --island-stagnation 1"
    assert [s["island"] for s in spawns] == list(range(5, 5 + len(spawns)))  # each new island once, in order
    first = spawns[0]
    assert first["expansions_without_improvement"] == 1
    assert (
        f"seeded from node {first['seed']}" in first["reason"]
        and f"island {first['stagnated']} made 1" in first["reason"]
    )
    # the decision that made the new island's first child carries the same record
    carried = [
        json.loads(d)["island_spawn"]
        for (d,) in read(run, "SELECT detail FROM events WHERE kind = 'expand'")
        if "island_spawn" in json.loads(d)
    ]
    assert carried[0] == first
