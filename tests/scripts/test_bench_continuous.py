"""scripts/bench_continuous.py: real searches on a task-folder fixture through `clade sweep`, figures read
back from their archives. The sweeps and the tables go to tmp_path: never the checkout's runs/, sweeps/ or
docs/."""

from __future__ import annotations

import os
import re

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from scripts.bench_continuous import main  # noqa: E402

NUMBER = r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?"


@pytest.mark.slow
def test_a_tiny_run_on_a_folder_prints_a_table_with_real_figures(tmp_path, capsys):
    markdown = tmp_path / "x.md"
    assert (
        main(
            [
                "--tasks",
                "metric_value_sine",
                "--policies",
                "greedy",
                "--seeds",
                "2",
                "--budget",
                "3",
                "--markdown",
                str(markdown),
                "--sweep-dir",
                str(tmp_path / "sweeps"),
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    # metric_value_sine's config.py says its metric, `error`, is lower-is-better: read from the task, not here
    assert "## metric_value_sine: budget 3 dev evaluations, error (lower is better)" in printed
    assert (
        "| policy | mean error [95% interval] | best error | beat seed | dev failed | caught by evaluator "
        "| status error | rejected | final node (mean id) | wall s per search |"
    ) in printed
    seed = re.search(rf"^\| seed agent \| ({NUMBER}) \| ({NUMBER}) \|", printed, re.MULTILINE)
    assert seed and float(seed.group(1)) == float(seed.group(2)) > 0
    row = re.search(
        rf"^\| `greedy` \| ({NUMBER}) \[({NUMBER}), ({NUMBER})\] \| ({NUMBER}) \| (\d)/2 \| "
        rf"({NUMBER})% \| ({NUMBER})% \| ({NUMBER})% \| ({NUMBER})% \| ({NUMBER}) \| ({NUMBER}) \|$",
        printed,
        re.MULTILINE,
    )
    assert row, printed
    mean, low, high, best, beat, failed, caught, errors, rejected, final, wall = map(float, row.groups())
    assert low <= mean <= high and best <= mean + 1e-12  # lower is better: the best is the smallest
    assert best <= float(seed.group(1)) + 1e-12 or beat == 0  # a final node no better than the seed never beats it
    assert 0 <= caught <= failed <= 100 and errors <= failed and 0 <= rejected <= 100 and final >= 0 and wall > 0
    assert len(re.findall(r"^  metric_value_sine greedy seed \d: ", printed, re.MULTILINE)) == 2
    (sweep,) = (tmp_path / "sweeps").iterdir()  # through clade sweep, its folder kept for clade sweep show
    text = markdown.read_text()
    assert "python3 scripts/bench_continuous.py --tasks metric_value_sine" in text and "load " in text
    assert "## metric_value_sine: budget 3" in text and "2 searches in" in text


@pytest.mark.parametrize("args", [["--tasks", "nope"], ["--policies", "nope"]])
def test_an_unknown_task_or_policy_is_one_line_and_exit_2(args, capsys, tmp_path):
    assert main([*args, "--markdown", str(tmp_path / "x.md")]) == 2
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0 and "unknown task or policy nope" in err
    assert not (tmp_path / "x.md").exists()
