"""A whole `--mutator self` search on Polyglot (DGM's and HGM's benchmark), under bwrap with two workers.

The model behind every call is scripted (tests/tasks/polyglot_support.py: the coding agent writes an
exercise's reference solution, but on the `flaky` exercises its first edit misquotes the stub, which the
seed agent does not survive; the agent on its own code adds the retry), answered through litellm's own
offline path. The final node resolves more exercises than the seed on dev and on holdout, and a replay
regrows the tree with no model call.
"""

from __future__ import annotations

import json
import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest

from engine.front.cli import build_parser
from engine.front.run import run_from_args
from engine.sandbox.bwrap import bwrap_available
from tests.engine.test_search_e2e import assert_budget_invariants, only_run, read
from tests.tasks.polyglot_support import PolyglotModel, needs_exercises

BWRAP_OK, BWRAP_WHY = bwrap_available()
MODEL = "openai/gpt-4o-mini"
DEV = ["python/affine-cipher", "go/alphametics", "rust/accumulate", "javascript/affine-cipher"]
HOLDOUT = ["python/beer-song", "go/beer-song"]
FLAKY = {"go/alphametics", "rust/accumulate", "go/beer-song"}  # only an agent that retries a failed edit solves them

pytestmark = [needs_exercises, pytest.mark.slow, pytest.mark.bwrap, pytest.mark.skipif(not BWRAP_OK, reason=BWRAP_WHY)]


def resolved(run, node: int, split: str) -> int:
    query = f"SELECT sum((metrics->>'resolved')::INT) FROM evaluations WHERE node_id = {node} AND split = '{split}'"
    return read(run, query)[0][0] or 0


def test_a_self_improving_search_on_polyglot_improves_on_dev_and_holdout_and_replays_at_no_cost(tmp_path, polyglot_dir):
    from tasks.polyglot.task import PolyglotTask

    subset = tmp_path / "subset.json"
    subset.write_text(json.dumps({"dev": DEV, "holdout": HOLDOUT}))
    task = PolyglotTask(instances_path=str(subset))
    assert [i.id for i in task.instances()] == DEV + HOLDOUT  # in their own splits
    model = PolyglotModel(task, flaky=FLAKY)
    argv = ["--task", "polyglot", "--mutator", "self", "--model", MODEL, "--instances", str(subset)]
    argv += ["--policy", "dgm", "--budget", "20", "--workers", "2", "--sandbox", "bwrap", "--seed", "1"]
    argv += ["--max-failed-expansions", "30", "--run-dir", str(tmp_path / "runs"), "--quiet"]
    assert run_from_args(build_parser().parse_args(argv), llm_mock=model) == 0
    run = only_run(tmp_path / "runs")
    assert_budget_invariants(run, 20)

    assert resolved(run, 0, "dev") == 2  # the seed gives up on the two flaky dev exercises
    holdout = read(run, "SELECT DISTINCT node_id FROM evaluations WHERE split = 'holdout' ORDER BY 1")
    assert len(holdout) == 2 and holdout[0][0] == 0  # the seed and the final node
    final_node = holdout[1][0]
    assert resolved(run, final_node, "dev") > resolved(run, 0, "dev")
    assert resolved(run, final_node, "holdout") > resolved(run, 0, "holdout")
    assert model.calls["solve"] > 0 and model.calls["self"] > 0
    counts = read(run, "SELECT metrics->>'tests_passed', metrics->>'tests_total' FROM evaluations WHERE status='ok'")
    assert all(int(p) <= int(t) for p, t in counts) and any(int(p) > 0 for p, _ in counts)

    replay = ["--replay", str(run), "--run-dir", str(tmp_path / "replayed"), "--quiet"]
    assert run_from_args(build_parser().parse_args(replay)) == 0  # no mock: an unknown question would fail
    replayed = only_run(tmp_path / "replayed")
    assert read(replayed, "SELECT count(*) FROM llm_calls")[0][0] == 0
    shape = "SELECT id, parent_id, status FROM nodes ORDER BY id"
    assert read(replayed, shape) == read(run, shape)
    assert resolved(replayed, final_node, "dev") == resolved(run, final_node, "dev")
