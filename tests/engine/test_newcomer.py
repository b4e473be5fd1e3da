"""What a newcomer met in the first hour, each as it must be now: run through the command line as a user runs it."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from engine.report.data import report_data
from engine.runinfo.info import run_info
from engine.runinfo.reading import open_read_only
from tests.conftest import REPO, run_cli
from tests.engine.test_search_e2e import only_run, read


def runs_cli(*args: str):
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("COLUMNS", None)
    return subprocess.run(
        [sys.executable, "-m", "engine.runs", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )


def test_workers_0_is_refused_in_one_line():
    out = run_cli("--workers", "0", "--budget", "4")
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert "--workers" in out.stderr and "1 or more" in out.stderr


@pytest.fixture(scope="module")
def resumed_run(tmp_path_factory) -> Path:
    """A run of 8 evaluations, an idle gap of 3 s, then a resume to 12: the shape that made wall times disagree."""
    from tests.conftest import small_instances

    root = tmp_path_factory.mktemp("newcomer")
    instances = small_instances(root / "inst.json")
    # a long folder name: a path that an 80-column wrap would have split
    runs = root / ("a-folder-name-long-enough-that-the-archive-path-passes-eighty-columns-" + "x" * 30)
    first = run_cli("--budget", "8", "--instances", str(instances), "--run-dir", str(runs))
    assert first.returncode == 0, first.stderr
    run = only_run(runs)
    time.sleep(3)
    again = run_cli("--resume", str(run), "--budget", "12")
    assert again.returncode == 0, again.stderr
    later = run_cli("--resume", str(run))  # a plain resume: the budget is the one set last
    assert later.returncode == 0, later.stderr
    (root / "outputs.json").write_text(json.dumps([first.stdout, again.stdout, later.stdout]))
    return run


def outputs(run: Path) -> list[str]:
    return json.loads((run.parents[1] / "outputs.json").read_text())


@pytest.mark.slow
def test_one_wall_time_everywhere_without_the_idle_gap(resumed_run):
    shown = run_info(resumed_run).wall_s
    with open_read_only(resumed_run) as archive:
        reported = report_data(archive)["run"]["wall_s"]
        first, last = archive.query('SELECT min("at"), max("at") FROM events')[0]
    assert shown == reported and shown > 0
    assert shown < (last - first).total_seconds() - 2.5  # the 3 s between the sessions is not engine time
    show = runs_cli("show", str(resumed_run))
    compare = runs_cli("compare", str(resumed_run), str(resumed_run))
    assert f"{shown:.1f} s" in show.stdout and f"{shown:.1f} s" in compare.stdout


@pytest.mark.slow
def test_paths_and_commands_never_wrap_in_a_pipe(resumed_run):
    archive = str(resumed_run / "archive.duckdb")
    for out in outputs(resumed_run):
        lines = out.splitlines()
        assert any(archive in line for line in lines), out  # the whole path on one line
        assert any(f"clade search --resume {resumed_run}" in line for line in lines)
    show = runs_cli("show", str(resumed_run))
    assert any(archive in line for line in show.stdout.splitlines())


def test_the_budget_shown_is_the_latest_set(resumed_run):
    *_, later = outputs(resumed_run)
    assert "budget 12 dev evaluations" in later and "12/12" not in later.replace("12/12 dev", "")
    assert read(resumed_run, "SELECT config->>'budget' FROM runs")[0][0] == "12"


def test_show_says_what_the_run_used(resumed_run):
    config = runs_cli("show", str(resumed_run)).stdout
    workers = next(line for line in config.splitlines() if "│ workers" in line)
    sandbox = next(line for line in config.splitlines() if "│ sandbox" in line)
    assert "(one per core)" in workers and any(ch.isdigit() and ch != "0" for ch in workers)
    assert "(auto)" in sandbox and any(name in sandbox for name in ("process", "bwrap", "docker"))


@pytest.mark.slow
def test_the_holdout_bar_knows_its_total_from_the_start(tmp_path, instances_file, monkeypatch):
    from engine.front.cli import build_parser
    from engine.front.progress import SearchProgress
    from engine.front.run import run_from_args

    totals = []
    monkeypatch.setattr(SearchProgress, "extra_work", lambda self, count: totals.append(count))
    args = build_parser().parse_args(
        ["--budget", "10", "--instances", str(instances_file), "--run-dir", str(tmp_path / "runs"), "--quiet"]
    )
    assert run_from_args(args) == 0
    run = only_run(tmp_path / "runs")
    holdout = read(run, "SELECT count(*) FROM evaluations WHERE split = 'holdout'")[0][0]
    references = read(run, "SELECT count(*) FROM reference_evaluations")[0][0]
    assert totals == [holdout + references]  # said once, whole (it grew 0/16, 16/32, 32/64 before)


def test_one_instance_tasks_say_nothing_of_stages(tmp_path):
    out = run_cli("--task", "circle_packing", "--budget", "2", "--run-dir", str(tmp_path / "runs"))
    assert out.returncode == 0, out.stderr
    header = next(line for line in out.stdout.splitlines() if line.startswith("Task "))
    assert "policy hgm," in header and "staged" not in header


def test_process_on_a_public_private_folder_warns_in_the_header(tmp_path):
    folder = REPO / "tests" / "fixtures" / "tasks" / "public_private_regression"
    out = run_cli("--task", str(folder), "--budget", "2", "--sandbox", "process", "--run-dir", str(tmp_path / "runs"))
    assert out.returncode == 0, out.stderr
    warning = next(line for line in out.stdout.splitlines() if line.startswith("Warning:"))
    assert "process sandbox cannot hide" in warning and str(folder / "data" / "private") in warning
