"""`clade sweep` end to end, as a user types it: a grid of real searches run side by side, stopped by SIGINT
and by kill -9 of the sweep's process, finished by `--resume` or by the same command again, each cell's
budget exact and no finished cell run twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clade import open_run
from engine.sweep.manifest import DONE, cell_status, read_manifest, run_folder
from tests.conftest import REPO, small_instances

BUDGET = 24


def clade(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "clade", *args], cwd=cwd, env=env(), capture_output=True, text=True, timeout=timeout
    )


def env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="200", LITELLM_LOCAL_MODEL_COST_MAP="True")


def grid_args(tmp_path: Path, *more: str) -> list[str]:
    instances = small_instances(tmp_path / "instances.json", n_dev=3, n_holdout=2, n_items=60)
    return [
        "sweep", "--task", "binpack", "--instances", str(instances), "--grid", "policy=hgm,greedy", "--seeds", "2",
        "--budget", str(BUDGET), "--sandbox", "process", *more,
    ]  # fmt: skip


def the_sweep(tmp_path: Path) -> Path:
    (found,) = (tmp_path / "sweeps").iterdir()
    return found


def dev_evaluations(run: Path) -> int:
    import duckdb

    with duckdb.connect(str(run / "archive.duckdb"), read_only=True) as db:
        return db.execute("SELECT count(*) FROM evaluations WHERE split = 'dev'").fetchone()[0]


def sessions(run: Path) -> int:
    """How many times a search ran this run (its `session` events: one per start or resume)."""
    import duckdb

    with duckdb.connect(str(run / "archive.duckdb"), read_only=True) as db:
        return db.execute("SELECT count(*) FROM events WHERE kind = 'session'").fetchone()[0]


def statuses(sweep: Path) -> dict[str, str]:
    made = read_manifest(sweep)
    return {cell.name: cell_status(made, cell) for cell in made.cells}


def test_a_sweep_runs_every_cell_to_its_budget_and_the_same_command_finds_it_done(tmp_path):
    done = clade(*grid_args(tmp_path, "--parallel", "2"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    sweep = the_sweep(tmp_path)
    manifest = json.loads((sweep / "sweep.json").read_text())
    assert manifest["axes"] == [["policy", ["hgm", "greedy"]]] and manifest["seeds"] == [0, 1]
    assert manifest["given"]["workers"] == 1 and manifest["parallel"] == 2
    assert [c["name"] for c in manifest["cells"]] == [
        "policy-hgm_s0",
        "policy-hgm_s1",
        "policy-greedy_s0",
        "policy-greedy_s1",
    ]
    assert set(statuses(sweep).values()) == {"finished"}
    for cell in (sweep / "cells").iterdir():
        run = run_folder(cell)
        assert run is not None and dev_evaluations(run) == BUDGET
        config = open_run(run).config.search
        assert (config.policy, config.seed) == tuple(read_manifest(sweep).cell(cell.name).settings.values())
        shown = clade("runs", "show", str(cell), cwd=tmp_path)  # an ordinary run; its cell's folder names it
        assert shown.returncode == 0 and f"Run {run.name}" in shown.stdout and "budget spent" in shown.stdout
    assert "hgm seed 0: finished" in done.stdout and "[4/4 done]" in done.stdout

    again = clade(*grid_args(tmp_path), cwd=tmp_path)
    assert again.returncode == 0 and "The same sweep is done" in again.stdout
    assert len(list((tmp_path / "sweeps").iterdir())) == 1


def started_cell(process: subprocess.Popen, tmp_path: Path) -> None:
    """The event a test stops the sweep on: a cell's search has begun its session (its live copy, written
    from the session's start on, is there)."""
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        assert process.poll() is None, "the sweep ended before a cell started"
        if any((tmp_path / "sweeps").glob("*/cells/*/*/archive.live.duckdb")):
            return
        time.sleep(0.1)
    raise AssertionError("no cell started in 240 s")


def sweep_under_way(tmp_path: Path, args: list[str], output: int) -> subprocess.Popen:
    """`clade sweep ARGS` started, once a cell's search has begun (`started_cell`)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "clade", *args], cwd=tmp_path, env=env(), stdout=output, stderr=output, text=True
    )
    started_cell(process, tmp_path)
    return process


def finish_and_check(tmp_path: Path, sweep: Path, before: dict[str, str], how: list[str]) -> None:
    """Finishing the sweep by `how` runs only the unfinished cells, each to exactly its budget."""
    runs_before = {name: run_folder(sweep / "cells" / name) for name in before}
    sessions_before = {name: sessions(run) for name, run in runs_before.items() if run is not None}
    done = clade(*how, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert set(statuses(sweep).values()) == {"finished"}
    for name, status in before.items():
        run = run_folder(sweep / "cells" / name)
        assert run is not None and dev_evaluations(run) == BUDGET
        if status in DONE:
            assert sessions(run) == sessions_before[name]  # kept as it was, not run again
        elif runs_before[name] is not None:
            assert run == runs_before[name] and sessions(run) == sessions_before[name] + 1  # resumed, not restarted
    assert len(list((tmp_path / "sweeps").iterdir())) == 1


@pytest.mark.slow
def test_sigint_stores_every_running_cell_and_resume_finishes_only_the_rest(tmp_path):
    args = grid_args(tmp_path, "--parallel", "1", "--budget", str(BUDGET))
    process = sweep_under_way(tmp_path, args, subprocess.PIPE)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=300)
    assert process.returncode == 130, err
    sweep = the_sweep(tmp_path)
    assert f"clade sweep --resume {sweep.relative_to(tmp_path)}" in err
    before = statuses(sweep)
    assert "running" not in before.values() and sum(s in DONE for s in before.values()) < 4
    assert "interrupted" in before.values()  # the cell running at the signal stored its run
    finish_and_check(tmp_path, sweep, before, ["sweep", "--resume", str(sweep)])


@pytest.mark.slow
def test_after_kill_9_of_the_sweep_the_same_command_finishes_it(tmp_path):
    args = grid_args(tmp_path, "--parallel", "2")
    process = sweep_under_way(tmp_path, args, subprocess.DEVNULL)
    process.kill()
    process.wait()
    sweep = the_sweep(tmp_path)
    deadline = time.monotonic() + 120
    while "running" in (before := statuses(sweep)).values():  # the event: each cell, sent SIGTERM, stored its run
        assert time.monotonic() < deadline, before
        time.sleep(0.1)
    assert sum(s in DONE for s in before.values()) < 4
    finish_and_check(tmp_path, sweep, before, grid_args(tmp_path))


def test_what_a_sweep_refuses_is_one_line(tmp_path):
    cases = {
        ("--grid", "seed=1,2"): "seeds are the sweep's own axis",
        ("--grid", "polcy=hgm"): "did you mean 'policy'",
        ("--grid", "policy=hgm,dgmm"): "--grid policy=dgmm: unknown policy 'dgmm'",
        ("--grid", "budget=10,x"): "--grid budget: 'x' is not a value of --budget",
        ("--grid", "policy=hgm", "--grid", "policy=dgm"): "--grid policy is given twice",
        ("--run-dir", "x"): "--sweep-dir",
        ("--seeds", "0"): "--seeds must be 1 or more",
        ("--resume", "nowhere"): "nowhere is not a sweep",
        ("--grid", "policy=hgm,dgm", "--baseline", "hgmm"): "--baseline 'hgmm' is not a group (did you mean 'hgm'?)",
    }
    for args, said in cases.items():
        done = clade("sweep", *args, cwd=tmp_path, timeout=60)
        assert done.returncode == 2, (args, done.stderr)
        assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1, (args, done.stderr)
    assert not (tmp_path / "sweeps").exists()  # nothing made for a refused sweep


def test_a_run_file_gives_the_grid_and_the_flags_win(tmp_path):
    from engine.sweep.plan import Asked, plan, read_sweep_file

    file = tmp_path / "sweep.toml"
    file.write_text(
        '[search]\nbudget = 30\npolicy = "dgm"\n\n[sweep]\nseeds = [3, 7]\nbaseline = "policy=hgm eval_timeout=5"\n\n'
        '[sweep.grid]\npolicy = ["greedy", "hgm"]\neval_timeout = [5, 10.5]\n'
    )
    asked = read_sweep_file(str(file), Asked(settings={"budget": 12}))
    made = plan(asked, str(tmp_path / "sweeps"))
    assert made.given["budget"] == 12 and made.seeds == (3, 7) and made.baseline == "policy=hgm eval_timeout=5"
    assert [(a.name, a.values) for a in made.axes] == [("policy", ("greedy", "hgm")), ("eval_timeout", (5.0, 10.5))]
    assert len(made.cells) == 8 and made.groups[0] == "policy=greedy eval_timeout=5"
    assert made.config(made.cells[-1]).evaluation.eval_timeout == 10.5

    searched = subprocess.run(
        [sys.executable, "-m", "engine.search", "--config", str(file)], env=env(), capture_output=True, text=True
    )
    assert searched.returncode == 2 and "clade sweep --config" in searched.stderr
    file.write_text("[sweep]\nseeds = 2\ncolour = 1\n")
    with pytest.raises(Exception, match=r"\[sweep\] colour is not a sweep key"):
        read_sweep_file(str(file), Asked())


def test_the_cost_cap_is_shared_so_the_cells_caps_never_add_up_to_more(tmp_path, monkeypatch):
    from engine.sweep import runner
    from engine.sweep.launch import LocalCells
    from engine.sweep.plan import Asked, axes_of, plan

    made = plan(Asked(axes=axes_of(["policy=hgm,dgm"]), seeds="3", max_cost=1.2), str(tmp_path))
    spent = {cell.name: 0.0 for cell in made.cells}
    spent["policy-hgm_s0"] = 0.3  # finished before, with its spend
    monkeypatch.setattr(runner, "spent", lambda sweep, cell: spent[cell.name])
    session = runner.SweepSession(made, LocalCells(), lambda line: None)
    first = session._cap(made.cells[1], left_after=4)
    assert first == pytest.approx((1.2 - 0.3) / 5)
    session.running.append(runner.Running(made.cells[1], job=None, cap=first))  # type: ignore[arg-type]
    second = session._cap(made.cells[2], left_after=3)
    assert second == pytest.approx((1.2 - 0.3 - first) / 4)
    spent["policy-dgm_s0"] = 0.25  # an interrupted cell: its own spend is given back to it, with its share
    third = session._cap(made.cells[3], left_after=2)
    assert third == pytest.approx(0.25 + (1.2 - 0.3 - 0.25 - first) / 3)
    assert 0.3 + first + third <= 1.2 + 1e-9
