"""One-instance tasks: the seed's noise probe, the evidence weight it gives, and a resume that keeps it.

Runs the command line in this process (`engine.front.cli.main`) with the default
workers and `--sandbox auto` on circle_packing, whose seed is deterministic.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from archive import Archive
from engine.front.cli import main
from engine.loop.state import RunState
from search.evidence import W_MAX, evidence_weight
from search.remeasure import PROBE_RUNS, pooled_variance, remeasure_reserve
from tasks import make_task


def only_run(folder: Path) -> Path:
    (run,) = [p for p in folder.iterdir() if p.is_dir()]
    return run


def test_the_seed_is_probed_once_and_the_final_rule_uses_w(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    assert main(["--task", "circle_packing", "--budget", "5", "--run-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Noise probe: the seed's runs on its dev instance scored 0.8682 and 0.8682 (deterministic)" in out
    assert f"w = {W_MAX:g}" in out
    run = only_run(tmp_path)
    with Archive.open(run / "archive.duckdb", read_only=True) as archive:
        seed_rows = archive.query(
            'SELECT "repeat", score FROM evaluations WHERE node_id = 0 AND split = \'dev\' ORDER BY "repeat"'
        )
        budgeted = archive.query("SELECT count(*) FROM evaluations WHERE split = 'dev' AND \"repeat\" = 0")[0][0]
        rule = archive.query("SELECT detail->>'rule' FROM events WHERE kind = 'select_final'")[0][0]
        state = RunState.rebuild(archive, make_task("circle_packing"))
    assert [r[0] for r in seed_rows] == [0, 1] and seed_rows[0][1] == seed_rows[1][1]
    assert budgeted == 4  # the probe counts in the budget of 5
    assert "continuous evidence" in rule
    assert state.noise_var == 0.0 and state.evidence() == W_MAX and not state.wants_noise_probe()

    assert main(["--resume", str(run), "--budget", "7"]) == 0
    with Archive.open(run / "archive.duckdb", read_only=True) as archive:
        probes = archive.query('SELECT count(*) FROM evaluations WHERE "repeat" = 1')[0][0]
        budgeted = archive.query("SELECT count(*) FROM evaluations WHERE split = 'dev' AND \"repeat\" = 0")[0][0]
    assert probes == 1 and budgeted == 6


@pytest.mark.slow
def test_many_instance_tasks_are_not_probed(tmp_path: Path, capsys) -> None:
    assert main(["--budget", "6", "--run-dir", str(tmp_path), "--quiet"]) == 0
    assert "Noise probe" not in capsys.readouterr().out
    with Archive.open(only_run(tmp_path) / "archive.duckdb", read_only=True) as archive:
        assert archive.query('SELECT count(*) FROM evaluations WHERE "repeat" > 0')[0][0] == 0


def noisy_sine(tmp_path: Path) -> Path:
    """The sine fixture with a benchmark that adds uniform noise to the error it prints."""
    import shutil

    folder = tmp_path / "noisy_sine"
    shutil.copytree(Path(__file__).resolve().parents[2] / "fixtures" / "tasks" / "metric_value_sine", folder)
    bench = folder / "benchmark.py"
    bench.write_text(
        bench.read_text()
        .replace("import math\n", "import math\nimport random\n")
        .replace('print(f"error: {error:.8f}")', 'print(f"error: {error + random.uniform(0.0, 0.02):.8f}")')
    )
    return folder


def test_a_noisy_seed_is_measured_against_its_first_run(tmp_path: Path, capsys, monkeypatch) -> None:
    """A stochastic benchmark: the probe's score is anchored on the seed's first run (not on itself, which
    would always give 0.5 and call any program deterministic)."""
    monkeypatch.setenv("COLUMNS", "250")
    assert main(["--task", str(noisy_sine(tmp_path)), "--budget", "4", "--run-dir", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    assert "(noisy)" in out
    with Archive.open(only_run(tmp_path / "runs") / "archive.duckdb", read_only=True) as archive:
        seed = [
            r[0]
            for r in archive.query(
                "SELECT score FROM evaluations WHERE node_id = 0 AND split = 'dev' ORDER BY \"repeat\""
            )
        ]
    assert seed[0] == 0.5 and seed[1] != 0.5
    w = evidence_weight(seed[0], pooled_variance({0: seed}))  # what the summary says it used
    assert f"counted as w = {w:g} pass/fail trials" in out


@pytest.mark.slow
def test_a_noisy_task_remeasures_its_best_candidates_and_chooses_from_their_runs(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    """Default workers and sandbox: the last twentieth of the budget (at least 2) re-runs the best
    candidates, the budget stays exact, and a resume rebuilds the same runs and noise."""
    monkeypatch.setenv("COLUMNS", "250")
    runs_dir = tmp_path / "runs"
    assert main(["--task", str(noisy_sine(tmp_path)), "--budget", "20", "--run-dir", str(runs_dir)]) == 0
    out = capsys.readouterr().out
    assert "Re-measured for the final choice" in out
    run = only_run(runs_dir)
    with Archive.open(run / "archive.duckdb", read_only=True) as archive:
        dev = archive.query("SELECT count(*) FROM evaluations WHERE split = 'dev'")[0][0]
        repeats = archive.query(
            "SELECT node_id, \"repeat\" FROM evaluations WHERE split = 'dev' "
            'AND "repeat" > 0 ORDER BY node_id, "repeat"'
        )
        rules = [
            r[0]
            for r in archive.query(
                "SELECT detail->>'rule' FROM events WHERE kind = 'evaluate' "
                "AND detail->>'rule' IN ('noise probe', 're-measure')"
            )
        ]
        final_rule, final_runs = archive.query(
            "SELECT detail->>'rule', CAST(detail->>'runs' AS INTEGER) FROM events WHERE kind = 'select_final'"
        )[0]
        state = RunState.rebuild(archive, make_task(str(tmp_path / "noisy_sine")))
    assert dev == 20  # probes and re-measures are in the budget, not on top
    assert rules.count("noise probe") == PROBE_RUNS - 1 and rules.count("re-measure") == remeasure_reserve(20)
    assert len(repeats) == PROBE_RUNS - 1 + remeasure_reserve(20)
    for node in {n for n, _ in repeats}:  # run numbers 1, 2, ... per node, none skipped
        numbers = [k for n, k in repeats if n == node]
        assert numbers == list(range(1, len(numbers) + 1))
    assert "re-measured" in final_rule and final_runs >= 2
    assert state.noisy() and state.dev_spent == 20 and sum(len(v) for v in state.runs.values()) == 20
    assert state.noise_var == pytest.approx(pooled_variance(state.runs))
    # the progress plot puts the re-runs on its axis and ends on the node the finale chose
    from engine.plots.progress import progress_series

    series = progress_series(run / "archive.duckdb")
    with Archive.open(run / "archive.duckdb", read_only=True) as archive:
        final = archive.query("SELECT node_id FROM events WHERE kind = 'select_final'")[0][0]
    assert len(series.evals) == 20 and series.final_node[-1] == final and "re-measured" in series.final_rule
