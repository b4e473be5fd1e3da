"""`clade sweep show` (engine/sweep/show.py) on a real sweep, and on copies with cells not done."""

from __future__ import annotations

import pytest

from engine.sweep import stats
from engine.sweep.results import read_results
from engine.sweep.show import main
from tests.engine.sweep.sweep_fixture import POLICIES, SEEDS, copy_of, remove_run, set_status, shared_sweep


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    return shared_sweep(tmp_path_factory)


def shown(capsys, *argv: str) -> tuple[int | str | None, str, str]:
    """(exit code, stdout, stderr) of the command (argparse's mistakes end in SystemExit)."""
    try:
        code: int | str | None = main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_every_cell_is_read_from_its_run(sweep):
    results = read_results(sweep)
    assert [c.cell for c in results.cells] == [f"policy-{p}_s{s}" for p in POLICIES for s in SEEDS]
    assert results.counts() == {"done": 6, "running": 0, "to go": 0, "damaged": 0}
    assert results.raw_metric == "excess %"  # binpack's raw figure
    for c in results.cells:
        assert c.status == "finished" and c.done and c.run_path is not None
        assert c.dev_evaluations == c.budget == 12 and c.dollars == 0.0 and c.tokens == 0
        assert c.wall_s is not None and c.wall_s > 0
        assert c.holdout is not None and 0 <= c.holdout <= 1 and c.holdout_raw is not None
        assert c.settings == {"policy": c.group}


def test_show_prints_the_header_tables_sentences_and_commands(sweep, capsys):
    code, out, err = shown(capsys, str(sweep))
    assert code == 0 and err == ""
    assert f"Sweep {sweep}" in out and "task    binpack" in out
    assert "grid    policy = hgm, greedy (2 groups)" in out and "seeds   0, 1, 2" in out
    assert "cells   6: 6 done, 0 running, 0 to go" in out and "statistics below" not in out
    assert "holdout score [95% CI]" in out and "holdout excess %" in out and "seeds won" in out
    lines = out.splitlines()
    hgm_row = next(line for line in lines if "hgm (baseline)" in line)
    greedy_row = next(line for line in lines if line.lstrip("│ ").startswith("greedy") and "3/3" in line)
    assert "3/3" in hgm_row and "/3" in greedy_row
    # the sentence is the statistics' own, over the three seeds
    results = read_results(sweep)
    (difference,) = stats.paired_differences(results.outcomes(), ["hgm", "greedy"], "hgm")
    assert difference.sentence in out and "over 3 seeds" in difference.sentence
    assert f"report: clade report {sweep}" in out
    assert f"cells:  clade runs show {sweep}/cells/<cell>  (e.g. clade runs show {sweep}/cells/policy-hgm_s0)" in out


def test_another_baseline(sweep, capsys):
    code, out, _ = shown(capsys, str(sweep), "--baseline", "greedy")
    assert code == 0 and "greedy (baseline)" in out and "hgm (baseline)" not in out
    assert any(line.startswith(("hgm above greedy", "hgm and greedy: no difference")) for line in out.splitlines())


def test_cells_not_done_are_counted_and_left_out(sweep, tmp_path, capsys):
    copy = copy_of(sweep, tmp_path)
    remove_run(copy, "policy-greedy_s2")
    set_status(copy, "policy-hgm_s1", "interrupted")
    set_status(copy, "policy-greedy_s1", "running")  # stored running, no search holds it: killed
    results = read_results(copy)
    by_name = {c.cell: c for c in results.cells}
    assert by_name["policy-greedy_s2"].status == "not started" and by_name["policy-greedy_s2"].run_path is None
    assert by_name["policy-hgm_s1"].status == "interrupted" and by_name["policy-hgm_s1"].holdout is None
    assert by_name["policy-greedy_s1"].status == "stopped (killed?)"
    assert results.counts() == {"done": 3, "running": 0, "to go": 3, "damaged": 0}
    code, out, _ = shown(capsys, str(copy))
    assert code == 0
    assert "cells   6: 3 done, 0 running, 3 to go" in out and "The statistics below use the 3 cells done." in out
    # paired over seed 0 alone (hgm has 0 and 2, greedy 0)
    assert "greedy and hgm: too few seeds to tell (1 paired)" in out
    assert "2/3" in next(line for line in out.splitlines() if "hgm (baseline)" in line)


def test_a_damaged_cell_is_said(sweep, tmp_path, capsys):
    copy = copy_of(sweep, tmp_path)
    results = read_results(copy)
    (copy_run,) = [c.run_path for c in results.cells if c.cell == "policy-hgm_s2"]
    assert copy_run is not None
    (copy_run / "archive.duckdb").write_bytes(b"not a database at all")
    code, out, _ = shown(capsys, str(copy))
    assert code == 0 and "5 done, 0 running, 0 to go, 1 damaged" in out


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["{missing}"], "is not a sweep (no such folder)"),
        (["{plain}"], "is not a sweep (no sweep.json in it)"),
        (["{sweep}", "--baseline", "uct"], "no group 'uct' in this sweep; its groups: hgm, greedy"),
        (["{sweep}", "--baseline", "hgn"], "no group 'hgn' in this sweep (did you mean 'hgm'?)"),
        (["{sweep}", "--basline", "hgm"], "unknown flag --basline (did you mean --baseline?)"),
    ],
)
def test_mistakes_are_one_line_and_exit_2(sweep, tmp_path, capsys, argv, said):
    places = {"missing": tmp_path / "nowhere", "plain": tmp_path, "sweep": sweep}
    code, out, err = shown(capsys, *(a.format(**places) for a in argv))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: ") and said in err


def test_a_cell_whose_search_has_just_begun_is_running(sweep, tmp_path, capsys):
    """A search holds its archive for writing and has no live copy yet: the cell is running, not damaged."""
    import subprocess
    import sys

    copy = copy_of(sweep, tmp_path)
    (run,) = [c.run_path for c in read_results(copy).cells if c.cell == "policy-greedy_s1"]
    assert run is not None
    hold = "import duckdb, sys; con = duckdb.connect(sys.argv[1]); print('held', flush=True); sys.stdin.read()"
    holder = subprocess.Popen(
        [sys.executable, "-c", hold, str(run / "archive.duckdb")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        results = read_results(copy)
        assert {c.cell: c.status for c in results.cells}["policy-greedy_s1"] == "running"
        assert results.counts() == {"done": 5, "running": 1, "to go": 0, "damaged": 0}
        code, out, _ = shown(capsys, str(copy))
        assert code == 0 and "cells   6: 5 done, 1 running, 0 to go" in out
    finally:
        holder.communicate("", timeout=30)


def test_a_sweep_of_seeds_only_with_one_cell_done(tmp_path, capsys):
    from engine.plots.synthetic import synthetic_archive
    from engine.sweep.manifest import Sweep, write_manifest

    sweep = Sweep(folder=tmp_path / "solo", task="binpack", axes=(), seeds=(0, 1), given={})
    write_manifest(sweep)
    run = sweep.cell_folder(sweep.cells[0]) / "run"
    run.mkdir(parents=True)
    synthetic_archive(run / "archive.duckdb", n_nodes=20, seed=0, n_dev=3, n_holdout=2)
    code, out, _ = shown(capsys, str(sweep.folder))
    assert code == 0
    assert "grid    seeds only (1 group)" in out and "cells   2: 1 done, 0 running, 1 to go" in out
    assert "The statistics below use the 1 cell done." in out
    (row,) = [line for line in out.splitlines() if line.startswith("│ all ")]
    assert "1/2" in row and "(one seed: no interval)" in row and "(baseline)" not in row
    assert "Paired differences" not in out  # nothing to compare with
