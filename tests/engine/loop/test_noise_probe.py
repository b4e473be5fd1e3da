"""One-instance tasks: the seed's noise probe, the evidence weight it gives, and a resume that keeps it.

Runs the command line in this process (`engine.front.cli.main`) with the default
workers and `--sandbox auto` on circle_packing, whose seed is deterministic.
"""
from __future__ import annotations

from pathlib import Path

from archive import Archive
from engine.front.cli import main
from engine.loop.state import RunState
from search.evidence import W_MAX, evidence_weight, probe_variance
from tasks import make_task


def only_run(folder: Path) -> Path:
    (run,) = [p for p in folder.iterdir() if p.is_dir()]
    return run


def test_the_seed_is_probed_once_and_the_final_rule_uses_w(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    assert main(["--task", "circle_packing", "--budget", "5", "--run-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Noise probe: the seed scored 0.8682 and 0.8682 on its dev instance (deterministic)" in out
    assert f"w = {W_MAX:g}" in out
    run = only_run(tmp_path)
    with Archive.open(run / "archive.duckdb", read_only=True) as archive:
        seed_rows = archive.query("SELECT \"repeat\", score FROM evaluations WHERE node_id = 0 AND split = 'dev' "
                                  "ORDER BY \"repeat\"")
        budgeted = archive.query("SELECT count(*) FROM evaluations WHERE split = 'dev' AND \"repeat\" = 0")[0][0]
        rule = archive.query("SELECT detail->>'rule' FROM events WHERE kind = 'select_final'")[0][0]
        state = RunState.rebuild(archive, make_task("circle_packing"))
    assert [r[0] for r in seed_rows] == [0, 1] and seed_rows[0][1] == seed_rows[1][1]
    assert budgeted == 4  # the probe counts in the budget of 5
    assert "continuous evidence" in rule
    assert state.noise_var == 0.0 and state.evidence() == W_MAX and not state.wants_noise_probe()

    assert main(["--resume", str(run), "--budget", "7"]) == 0
    with Archive.open(run / "archive.duckdb", read_only=True) as archive:
        probes = archive.query("SELECT count(*) FROM evaluations WHERE \"repeat\" = 1")[0][0]
        budgeted = archive.query("SELECT count(*) FROM evaluations WHERE split = 'dev' AND \"repeat\" = 0")[0][0]
    assert probes == 1 and budgeted == 6


def test_many_instance_tasks_are_not_probed(tmp_path: Path, capsys) -> None:
    assert main(["--budget", "6", "--run-dir", str(tmp_path), "--quiet"]) == 0
    assert "Noise probe" not in capsys.readouterr().out
    with Archive.open(only_run(tmp_path) / "archive.duckdb", read_only=True) as archive:
        assert archive.query("SELECT count(*) FROM evaluations WHERE \"repeat\" > 0")[0][0] == 0


def test_a_noisy_seed_is_measured_against_its_first_run(tmp_path: Path, capsys, monkeypatch) -> None:
    """A stochastic benchmark: the probe's score is anchored on the seed's first run (not on itself, which
    would always give 0.5 and call any program deterministic)."""
    import shutil

    folder = tmp_path / "noisy_sine"
    shutil.copytree(Path(__file__).resolve().parents[2] / "fixtures" / "tasks" / "metric_value_sine", folder)
    bench = folder / "benchmark.py"
    bench.write_text(bench.read_text().replace(
        "import math\n", "import math\nimport random\n").replace(
        "print(f\"error: {error:.8f}\")", "print(f\"error: {error + random.uniform(0.0, 0.02):.8f}\")"))
    monkeypatch.setenv("COLUMNS", "250")
    assert main(["--task", str(folder), "--budget", "4", "--run-dir", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    assert "(noisy)" in out
    with Archive.open(only_run(tmp_path / "runs") / "archive.duckdb", read_only=True) as archive:
        (first, second), = [tuple(r) for r in archive.query(
            "SELECT list(score ORDER BY \"repeat\")[1], list(score ORDER BY \"repeat\")[2] FROM evaluations "
            "WHERE node_id = 0 AND split = 'dev'")]
    assert first == 0.5 and second != 0.5
    w = evidence_weight(first, probe_variance(first, second))  # what the summary says it used
    assert f"counted as w = {w:g} pass/fail trials" in out
