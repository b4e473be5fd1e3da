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
