"""scripts/bench_cluster.py --quick runs end to end and prints the engine's ceiling (per-evaluation commit beside
group commit), one group's write four ways, and Ray's overhead."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from engine.sandbox.ray_executor import ray_available

REPO = Path(__file__).resolve().parents[2]
FLOAT = r"([+-]?\d+(?:\.\d+)?)"
RAY_OK, RAY_WHY = ray_available()

pytestmark = [pytest.mark.ray, pytest.mark.skipif(not RAY_OK, reason=RAY_WHY)]


@pytest.mark.slow
def test_bench_cluster_quick_prints_rates_overheads_and_workers():
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run(
        [sys.executable, "scripts/bench_cluster.py", "--quick"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    for n in (1000, 10000):  # the quick sizes, each per-evaluation commit ('each') beside group commit
        for mode in ("each", "group"):
            row = re.search(
                rf"^ +{n} +{mode} \| +{FLOAT} +{FLOAT} \| +{FLOAT} \| +{FLOAT} +{FLOAT} +{FLOAT} +{FLOAT} \| "
                rf"+{FLOAT} +{FLOAT}$",
                text,
                re.MULTILINE,
            )
            assert row, f"no ceiling row for {n} nodes, {mode}:\n{text}"
            rate, ratio, per_txn, decision, write, rest, total, cpu, per_cpu_s = map(float, row.groups())
            assert cpu > 0 and abs(1e3 / cpu - per_cpu_s) / per_cpu_s < 0.02  # cpu is printed to 3 decimals
            assert rate > 0 and total > 0 and decision >= 0 and write > 0
            assert abs(decision + write + rest - total) < 0.01
            assert abs(1e3 / rate - total) / total < 0.02
            assert (ratio, per_txn) == (1.0, 1.0) if mode == "each" else per_txn > 1.0
            assert re.search(rf"\[{n} nodes, {mode}\] .*150 evaluations \(150 rows stored\) in \d+ transactions", text)
    assert re.search(r"target at 10000 nodes: >= 1000/s with group commit: \d+/s, (met|NOT met)", text), text
    for way in ("one transaction per evaluation", "executemany", "multi-row INSERT", "unnested lists"):
        assert re.search(rf"^  {way}.* \| +{FLOAT} +{FLOAT} \| +{FLOAT} +{FLOAT}$", text, re.MULTILINE), text
    for label in ("local process", "ray/process"):
        line = re.search(
            rf"^ +{re.escape(label)} +wall +{FLOAT} s, 12/12 ok, per evaluation +{FLOAT} ms, "
            rf"overhead +{FLOAT} ms$",
            text,
            re.MULTILINE,
        )
        assert line, f"no overhead line for {label}:\n{text}"
        assert float(line[2]) >= 200 - 1  # every job sleeps 0.2 s
    ratio = re.search(rf"ray/local: wall per evaluation ratio {FLOAT}x", text)
    assert ratio and float(ratio[1]) > 0.5, text
    assert "W = (T + o) / c" in text
    # Slurm beside Ray where a cluster answers (.ci/run starts one), else the reason it was left out
    slurm = re.search(
        rf"^ +slurm/process +wall +{FLOAT} s, 12/12 ok, per evaluation +{FLOAT} ms, overhead +{FLOAT} ms$",
        text,
        re.MULTILINE,
    )
    assert slurm or re.search(r"^  slurm skipped: \S", text, re.MULTILINE), text
    cells = 9 if slurm else 6
    for n in (1000, 10000):
        workers = re.search(rf"^ +{n} +{FLOAT} \|(( +\d+(?: \|)?){{{cells}}})$", text, re.MULTILINE)
        assert workers, f"no workers row for {n} nodes:\n{text}"
        assert all(int(w) > 0 for w in re.findall(r"\d+", workers[2]))
