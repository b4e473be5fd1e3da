"""A failure the evaluator caught is a failure: each format's rule (tasks/adapters/caught.py), on crafted answers,
with the negatives (a warning on stderr, a numeric `error` metric, ShinkaEvolve's `correct: false` without a why)."""

from __future__ import annotations

import json

import pytest

from engine.sandbox.base import SandboxResult
from tasks import make_task
from tasks.adapters.caught import openevolve_caught, python_traceback, shinka_caught
from tasks.base import Grade
from tests.conftest import REPO

FIXTURES = REPO / "tests" / "fixtures" / "tasks"
TRACEBACK = (
    'Traceback (most recent call last):\n  File "x.py", line 3, in f\n    1 / 0\nZeroDivisionError: division by zero\n'
)
WARNING = "/tmp/x.py:3: RuntimeWarning: overflow encountered in exp\n  y = np.exp(x)\n"


def fixture(name: str):
    task = make_task(str(FIXTURES / name))
    return task, task.instances()[0]


@pytest.mark.parametrize(
    ("metrics", "artifacts", "caught"),
    [
        ({"combined_score": 0.0, "error": "float division by zero"}, {}, "float division by zero"),
        ({"combined_score": 0.0, "errors": "['bad shape', 'nan']"}, {}, "['bad shape', 'nan']"),
        ({"combined_score": 0.0}, {"error_type": "TypeError", "error_message": "bad operand"}, "bad operand"),
        ({"combined_score": 0.0}, {"full_traceback": TRACEBACK}, "ZeroDivisionError: division by zero"),
        ({"combined_score": 0.4}, {"stage2_stderr": "IndexError: list index out of range"}, "IndexError: list"),
        ({"combined_score": 0.0}, {"stderr": "some output\n" + TRACEBACK}, "ZeroDivisionError: division by zero"),
        ({"combined_score": 0.0}, {"failure_stage": "stage1"}, "failed at stage1"),
    ],
)
def test_openevolve_errors_in_metrics_or_artifacts_are_caught(metrics, artifacts, caught):
    assert openevolve_caught(metrics, artifacts).startswith(caught)


@pytest.mark.parametrize(
    ("metrics", "artifacts"),
    [
        ({"combined_score": 0.9, "error": 0.03}, {}),  # a number under `error` is a metric (a mean error)
        ({"combined_score": 0.9, "error": ""}, {"error": None}),  # "no error", as evaluators spell it
        ({"combined_score": 0.9, "errors": "[]"}, {}),
        ({"combined_score": 0.9}, {"stderr": WARNING}),  # a warning is not a failure
        ({"combined_score": 0.9}, {"convergence_info": "converged in 50 iterations"}),
    ],
)
def test_openevolve_numbers_warnings_and_empty_errors_are_not_caught(metrics, artifacts):
    assert openevolve_caught(metrics, artifacts) == ""


def test_an_openevolve_answer_with_an_error_keeps_its_figures_but_never_as_the_raw_metric():
    task, instance = fixture("openevolve_minimize")
    answer = {"metrics": {"combined_score": 0.0, "error": "float division by zero"}, "stage": 1, "stages": 2}
    grade = task.grade(instance, json.dumps(answer).encode())
    assert grade.valid and grade.caught == "float division by zero"
    assert grade.metrics["failed_metric"] == 0.0 and grade.metrics["evaluator"] == {"combined_score": 0.0}
    assert "metric" not in grade.metrics and task.raw_value([grade.metrics]) is None
    clean = {"metrics": {"combined_score": 0.7}, "stage": 2, "stages": 2, "artifacts": {"stderr": WARNING}}
    assert task.grade(instance, json.dumps(clean).encode()).caught == ""


def test_shinka_incorrect_with_a_why_is_caught_without_one_it_stays_bad_output():
    assert shinka_caught({"correct": False, "error": "shape (3,) not (12, 2)"}) == "shape (3,) not (12, 2)"
    assert shinka_caught({"correct": False, "error": None}) == ""
    assert shinka_caught({"correct": True, "error": "ignored when correct"}) == ""
    task, instance = fixture("shinka_spread")

    def grade(correct):
        return task.grade(instance, json.dumps({"metrics": {"combined_score": 0.0}, "correct": correct}).encode())

    caught = grade({"correct": False, "error": "a coordinate is not finite"})
    assert caught.valid and caught.caught == "incorrect: a coordinate is not finite"
    assert caught.metrics == {"failed_metric": 0.0, "evaluator": {"combined_score": 0.0}}
    silent = grade({"correct": False})
    assert not silent.valid and not silent.caught and silent.feedback.startswith("incorrect: ")
    assert grade({"correct": True, "error": None}).caught == ""


def test_metric_value_with_a_traceback_on_the_benchmarks_stderr_is_caught_a_warning_is_not():
    task, instance = fixture("metric_value_sine")

    def grade(stderr):
        return task.grade(instance, json.dumps({"value": "0.25", "lines": 1, "stderr": stderr}).encode())

    caught = grade("fell back to 0.25\n" + TRACEBACK)
    assert caught.valid and caught.caught == "ZeroDivisionError: division by zero"
    assert caught.metrics == {"failed_metric": 0.25}
    assert grade(WARNING).caught == "" and grade(WARNING).metrics == {"metric": 0.25}
    swallowed = "Exception ignored in: <function F.__del__>\n" + TRACEBACK  # Python's own report, at exit
    assert grade(swallowed).caught == ""
    old = task.grade(instance, json.dumps({"value": "0.25", "lines": 1}).encode())  # a runner without stderr
    assert old.caught == "" and old.metrics == {"metric": 0.25}


def test_public_private_reads_the_programs_stderr_by_the_same_rule():
    task, _ = fixture("public_private_regression")
    valid = Grade(True, {"metric": 0.5}, "rmse: 0.5")

    def result(stderr):
        return SandboxResult(status="ok", returncode=0, answer=b"", stdout_tail="", stderr_tail=stderr, runtime_s=0.1)

    caught = task.caught_in_output(valid, result("writing a fallback\n" + TRACEBACK))
    assert caught.caught == "ZeroDivisionError: division by zero" and caught.metrics == {"failed_metric": 0.5}
    assert task.caught_in_output(valid, result(WARNING)) is valid


def test_python_traceback_reads_the_last_one_and_survives_a_cut_or_chained_one():
    assert python_traceback("") == "" and python_traceback(WARNING) == ""
    chained = (
        TRACEBACK
        + "\nDuring handling of the above exception, another exception occurred:\n\n"
        + (TRACEBACK.replace("ZeroDivisionError: division by zero", "ValueError: bad"))
    )
    assert python_traceback(chained) == "ValueError: bad"
    assert python_traceback("Traceback (most recent call last):\n") == "a Python traceback"
