"""Polyglot's grading in real sandboxes: one exercise per language, its reference passes and its stub fails.

The whole benchmark (225 exercises, both answers) is scripts/bench_polyglot.py's; this is its sample, under
bwrap and under docker, through the task's own check job and grade.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from engine.errors import UserError
from engine.sandbox.bwrap import bwrap_available
from tasks.base import CheckRun
from tests.tasks.polyglot_support import SAMPLE, needs_exercises

BWRAP_OK, BWRAP_WHY = bwrap_available()


def _task(polyglot_dir, exercises):
    from tasks.polyglot.task import PolyglotTask

    task = PolyglotTask(instances_path=",".join(exercises))
    try:
        task.instances()
    except UserError as exc:  # a toolchain .ci/run installs is missing here
        pytest.skip(str(exc))
    return task


def grade(task, box, instance, files: dict[str, str]):
    answer = json.dumps({"files": files}).encode()
    job = task.check_job(instance, answer)
    result = asyncio.run(box.run(job))
    return task.grade(instance, answer, CheckRun(job, result))


def check_sample(task, box) -> None:
    for instance in task.instances():
        exercise = task.exercise(instance)
        good = grade(task, box, instance, exercise.reference())
        assert good.metrics["resolved"] == 1, (instance.id, good.feedback)
        assert good.metrics["tests_passed"] == good.metrics["tests_total"] > 0
        stub = grade(task, box, instance, {})
        assert stub.metrics["resolved"] == 0, (instance.id, stub.feedback)
        assert "changed no solution file" in stub.feedback


@needs_exercises
@pytest.mark.slow
@pytest.mark.bwrap
@pytest.mark.skipif(not BWRAP_OK, reason=BWRAP_WHY)
def test_each_language_grades_its_reference_as_resolved_and_its_stub_not_under_bwrap(polyglot_dir):
    from engine.sandbox import make_sandbox

    task = _task(polyglot_dir, SAMPLE)
    box = make_sandbox("bwrap", toolchains=task.toolchains())
    check_sample(task, box)


@needs_exercises
@pytest.mark.slow
@pytest.mark.docker
def test_each_language_grades_its_reference_as_resolved_and_its_stub_not_under_docker(polyglot_dir, docker_polyglot):
    task = _task(polyglot_dir, SAMPLE)
    check_sample(task, docker_polyglot)


TEST_RUN_AGENT = """
import json, pathlib, subprocess


def solve(problem):
    references = json.loads(pathlib.Path("references.json").read_text())
    for path, text in references[problem["instance_id"]].items():
        (pathlib.Path(problem["workspace"]) / path).write_text(text)
    command = problem["test_command"]
    said = "no test command"
    if command:
        done = subprocess.run(command, shell=True, cwd=problem["workspace"], capture_output=True, text=True)
        said = (done.stdout.strip().splitlines() or ["(nothing)"])[-1] + f" (exit {done.returncode})"
    with open(problem["trajectory_file"], "a") as fh:
        fh.write(json.dumps({"step": 0, "tool": "test", "action": command, "result": said}) + "\\n")
    return said
"""


@needs_exercises
@pytest.mark.slow
@pytest.mark.bwrap
@pytest.mark.skipif(not BWRAP_OK, reason=BWRAP_WHY)
@pytest.mark.parametrize("agent_tests", [True, False], ids=["agent-tests-on", "agent-tests-off"])
def test_the_agent_runs_the_exercises_tests_as_grading_does_unless_turned_off(tmp_path, polyglot_dir, agent_tests):
    from engine.sandbox.bwrap import BwrapSandbox
    from tasks.polyglot.task import PolyglotTask
    from tests.engine.test_coding_agent_runs import evaluate

    task = PolyglotTask(instances_path="python/affine-cipher,go/beer-song", agent_tests=agent_tests)
    instances = task.instances()
    references = {i.id: task.exercise(i).reference() for i in instances}
    files = {"agent.py": TEST_RUN_AGENT, "references.json": json.dumps(references)}
    sandbox = BwrapSandbox(toolchains=task.toolchains())
    outcomes, _ = evaluate(tmp_path, files, instances, lambda *a: "", sandbox=sandbox, task=task)
    assert len(outcomes) == 2
    for outcome in outcomes:
        assert outcome.metrics["resolved"] == 1, outcome.feedback
        said = outcome.trajectory[-1]["result"]
        if agent_tests:  # the last line of tests.py: the counts grading reads, and its exit status
            assert said == f"{outcome.metrics['tests_passed']} passed, 0 failed (exit 0)", said
        else:
            assert said == "no test command"
