"""The `clade` command as a user types it: run from a folder outside the checkout, the checkout on PYTHONPATH."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, small_instances


def clade(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="200", LITELLM_LOCAL_MODEL_COST_MAP="True")
    return subprocess.run(
        [sys.executable, "-m", "clade", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def expected_version() -> str:
    from clade import __version__

    return f"clade {__version__}"


COMMANDS = (
    ("search",),
    ("runs",),
    ("snapshot",),
    ("report",),
    ("new-task",),
    ("plot", "lineage"),
    ("plot", "progress"),
    ("plot", "arena"),
)


def test_version_alone(tmp_path):
    done = clade("--version", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == expected_version()


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_says_the_version(tmp_path, command):
    done = clade(*command, "--version", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == expected_version()


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_names_the_command_as_typed(tmp_path, command):
    done = clade(*command, "--help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    typed = " ".join(("clade", *command))
    assert done.stdout.startswith(f"usage: {typed} "), done.stdout[:200]
    assert "python -m engine" not in done.stdout.splitlines()[0]


@pytest.mark.parametrize("module", ["engine.search", "engine.runs", "engine.snapshot"])
def test_python_m_keeps_its_own_name_and_has_the_version(tmp_path, module):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    run = [sys.executable, "-m", module]
    helped = subprocess.run([*run, "--help"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert helped.stdout.startswith(f"usage: python -m {module} "), helped.stdout[:200]
    version = subprocess.run([*run, "--version"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and version.stdout.strip() == expected_version()


def test_an_error_names_the_command_in_one_line(tmp_path):
    done = clade("search", "--no-such-flag", cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "--no-such-flag" in lines[0], done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("frobnicate",), "unknown command 'frobnicate'; the commands:"),
        (("plot",), "clade plot needs one of lineage, progress, arena"),
        (("plot", "pie"), "clade plot needs one of lineage, progress, arena (got pie)"),
        (("serch",), "unknown command 'serch' (did you mean 'search'?)"),
        (("plot", "lineag"), "(got lineag) (did you mean 'lineage'?)"),
    ],
)
def test_an_unknown_command_or_plot_is_one_line_and_exit_2(tmp_path, args, said):
    done = clade(*args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0], done.stderr


def test_no_command_shows_the_overview_and_exit_2(tmp_path):
    done = clade(cwd=tmp_path)
    assert done.returncode == 2
    for name in ("search", "runs", "snapshot", "report", "new-task", "plot lineage"):
        assert f"  {name} " in done.stdout


@pytest.mark.slow
def test_a_search_then_its_listing_plot_and_report(tmp_path):
    """The README's path through the `clade` command: search, list, plot, report, from outside the checkout."""
    instances = small_instances(tmp_path / "instances.json")
    searched = clade("search", "--budget", "20", "--instances", str(instances), "--quiet", cwd=tmp_path, timeout=300)
    assert searched.returncode == 0, searched.stderr[-2000:]
    (run,) = (tmp_path / "runs").iterdir()
    assert (run / "archive.duckdb").is_file()

    listed = clade("runs", "list", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert run.name in listed.stdout and "finished" in listed.stdout

    plotted = clade("plot", "lineage", f"runs/{run.name}", cwd=tmp_path)
    assert plotted.returncode == 0, plotted.stderr
    assert (run / "lineage.png").stat().st_size > 0 and (run / "lineage.svg").stat().st_size > 0

    reported = clade("report", f"runs/{run.name}", cwd=tmp_path)
    assert reported.returncode == 0, reported.stderr
    page = (run / "report.html").read_text(encoding="utf-8")
    assert run.name in page

    missing = clade("report", "runs/no-such-run", cwd=tmp_path)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1, missing.stderr
