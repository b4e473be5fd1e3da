"""scripts/bench_operators.py's classification and tables (no search run here: the script's runs are the
benchmark itself)."""

from __future__ import annotations

from collections import Counter

import pytest

from scripts.bench_operators import evaluator_error, main, operator_table


@pytest.mark.parametrize(
    ("status", "feedback", "stderr", "caught"),
    [
        ("failed_in_evaluator", "", "", True),
        ("ok", "combined_score=0; error: unsupported operand type(s) for -: 'function' and 'Generator'", "", True),
        ("ok", "combined_score=0; correct: false", "", True),
        ("ok", "metric=3.2", "Traceback (most recent call last):\n  ...", True),
        ("ok", "error: 0.0297868", "", False),  # metric_value_sine's metric is named error
        ("ok", "combined_score=0.56, mean_value=0.9", "", False),
        ("error", "combined_score=0; error: boom", "", False),  # the sandbox's, not the evaluator's
    ],
)
def test_what_counts_as_caught_by_the_evaluator(status: str, feedback: str, stderr: str, caught: bool) -> None:
    assert evaluator_error(status, feedback, stderr) is caught


def test_failing_share_is_over_attempts_and_duplicates_stay_apart() -> None:
    counts = {
        "count": Counter(made=8, gate=2, sandbox=1, evaluator=1, duplicate=1, gate_recorded=1),
        "const": Counter(made=10, sandbox=5),  # a checkout that did not record gate rejections
    }
    lines = operator_table(counts)
    assert "| `count` | 8 | 20.0% | 10.0% | 10.0% | 40.0% | 10.0% |" in lines
    assert "| `const` | 10 | n/a | 50.0% | 0.0% | 50.0% | 0.0% |" in lines


def test_bad_arguments_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--seeds", "0"]) == 2
    assert main(["--tasks", "no_such_task_here"]) == 2
    assert "error:" in capsys.readouterr().err
