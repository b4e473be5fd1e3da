"""scripts/bench_noisy.py: real searches on the noisy sine through the command line, true errors computed from
the final nodes' programs. Runs go to a temporary folder, never the checkout's runs/."""

from __future__ import annotations

import os
import re

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from scripts.bench_noisy import main, true_error  # noqa: E402


def test_true_error_is_the_noise_free_mean_absolute_error() -> None:
    assert true_error("import math\ndef approximate(x):\n    return math.sin(x)\n") == 0.0
    assert true_error("def approximate(x):\n    return 0.0\n") == pytest.approx(2 / 3.14159265, rel=0.01)


@pytest.mark.slow
def test_a_tiny_run_prints_each_final_node_and_the_mean(capsys) -> None:
    assert main(["--seeds", "2", "--budget", "4"]) == 0
    printed = capsys.readouterr().out
    finals = re.findall(r"seed (\d): final node (\d+), true error (\d\.\d{5})$", printed, re.MULTILINE)
    assert [s for s, _, _ in finals] == ["0", "1"]
    summary = re.search(
        r"mean true error (\d\.\d{5}) \(seed program (\d\.\d{5})\); (\d) of 2 beat the seed, "
        r"(\d) ended on the seed's error",
        printed,
    )
    assert summary, printed
    mean, seed, beat, same = float(summary[1]), float(summary[2]), int(summary[3]), int(summary[4])
    assert mean == pytest.approx(sum(float(e) for _, _, e in finals) / 2, abs=1e-5)
    assert beat == sum(float(e) < seed for _, _, e in finals) and beat + same <= 2
    assert main(["--seeds", "0"]) == 2
