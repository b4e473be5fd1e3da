"""scripts/plot_arena.py as a user runs it, over a small real arena run, and engine/plots/arena.py's data."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli

pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def arena_run(tmp_path_factory) -> Path:
    """The folder of a finished arena run (tournament, 2 agents and 2 testers, offline mutator)."""
    runs = tmp_path_factory.mktemp("arena") / "runs"
    out = run_cli(
        "--task",
        "email_validation",
        "--arena",
        "tournament",
        "--arena-population",
        "2",
        "--budget",
        "24",
        "--workers",
        "2",
        "--run-dir",
        str(runs),
        "--quiet",
        timeout=240,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    (run,) = list(runs.iterdir())
    return run


def script(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, str(REPO / "scripts" / "plot_arena.py"), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
def test_plot_arena_writes_png_and_svg_into_the_run_folder_and_regenerates_them(arena_run):
    out = script(str(arena_run))
    assert out.returncode == 0, out.stderr
    png, svg = arena_run / "arena.png", arena_run / "arena.svg"
    assert f"wrote {png}\n" in out.stdout and f"wrote {svg}\n" in out.stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = svg.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text and f"Clade arena: {arena_run.name}" in text
    again = script(str(arena_run / "archive.duckdb"))  # the archive file works too; our own plots are replaced
    assert again.returncode == 0 and again.stdout.count("(replaced the previous plot)") == 2, again.stderr


def test_plot_arena_leaves_a_users_file_alone_without_force(arena_run, tmp_path):
    (tmp_path / "arena.svg").write_text("<svg>mine</svg>")
    out = script(str(arena_run), "--out", str(tmp_path))
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "--force" in out.stderr
    assert (tmp_path / "arena.svg").read_text() == "<svg>mine</svg>" and not (tmp_path / "arena.png").exists()
    forced = script(str(arena_run), "--out", str(tmp_path), "--force", "--formats", "png")
    assert forced.returncode == 0, forced.stderr
    assert (tmp_path / "arena.png").is_file() and (tmp_path / "arena.svg").read_text() == "<svg>mine</svg>"


def test_arena_info_has_one_entry_per_finished_round(arena_run):
    from archive import Archive
    from engine.arena import ledger
    from engine.plots.arena import arena_info

    with Archive.open(arena_run, read_only=True) as archive:
        info = arena_info(archive)
        events = ledger.rounds(archive)
    assert events and [r.round for r in info.rounds] == [e["round"] for e in events]
    assert info.run_id == arena_run.name and info.mode == "tournament"
    first = info.rounds[0]
    assert first.champion == events[0]["champion"]
    assert first.original == pytest.approx(events[0]["original"])
    assert all(r.holdout is not None and 0.0 <= r.holdout <= 1.0 for r in info.rounds)
    assert [r.dev_instances for r in info.rounds] == [e["dev_instances"] for e in events]
    assert arena_info(str(arena_run)) == info  # a folder works too


def _empty_run(folder: Path, **config: str) -> Path:
    """A run folder whose archive holds a run and nothing else (no node, no event)."""
    from archive import Archive

    folder.mkdir()
    with Archive.create(folder / "archive.duckdb", folder.name, {"task": "email_validation", **config}, seed=0):
        pass
    return folder


@pytest.mark.parametrize(
    "case, message",
    [
        ("missing", "does not exist"),
        ("not an arena", "not an arena run"),
        ("no round", "no finished round"),
        ("not an archive", "not an archive"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(tmp_path, case, message):
    path = {
        "missing": lambda: tmp_path / "no-such-run",
        "not an arena": lambda: _empty_run(tmp_path / "plain-run"),
        "no round": lambda: _empty_run(tmp_path / "arena-run", arena="single"),
        "not an archive": lambda: tmp_path,
    }[case]()
    out = script(str(path))
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stderr.startswith("error: ") and out.stderr.count("\n") == 1 and message in out.stderr
    assert "Traceback" not in out.stderr and not list(tmp_path.glob("**/arena.*"))
