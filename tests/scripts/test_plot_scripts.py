"""scripts/plot_lineage.py and scripts/plot_progress.py as a user runs them (issue 6)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.engine.plots.run_fixture import shared_small_run, shared_synthetic_run

pytest.importorskip("matplotlib")


@pytest.fixture
def run_copy(tmp_path_factory, tmp_path) -> Path:
    """A copy of the shared real run, so that plots written into its folder stay in this test."""
    source = shared_small_run(tmp_path_factory)
    return Path(shutil.copytree(source, tmp_path / source.name))


def script(name: str, *args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, str(REPO / "scripts" / name), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
def test_plot_lineage_writes_png_and_svg_into_the_run_folder_and_regenerates_them(run_copy):
    out = script("plot_lineage.py", str(run_copy))
    assert out.returncode == 0, out.stderr
    png, svg = run_copy / "lineage.png", run_copy / "lineage.svg"
    assert f"wrote {png}\n" in out.stdout and f"wrote {svg}\n" in out.stdout
    assert png.read_bytes()[:4] == b"\x89PNG"
    titles = [t.text for t in ET.parse(svg).getroot().iter("{http://www.w3.org/2000/svg}title")]
    assert any(t.startswith("node 0: ") for t in titles)
    again = script("plot_lineage.py", str(run_copy / "archive.duckdb"))  # the file works too
    assert again.returncode == 0 and again.stdout.count("(replaced the previous plot)") == 2


def test_plot_lineage_leaves_a_users_file_alone_without_force(run_copy, tmp_path):
    out_dir = tmp_path / "figures"
    out_dir.mkdir()
    (out_dir / "lineage.svg").write_text("<svg>mine</svg>")
    out = script("plot_lineage.py", str(run_copy), "--out", str(out_dir))
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "--force" in out.stderr
    assert (out_dir / "lineage.svg").read_text() == "<svg>mine</svg>" and not (out_dir / "lineage.png").exists()
    forced = script("plot_lineage.py", str(run_copy), "--out", str(out_dir), "--force", "--formats", "svg")
    assert forced.returncode == 0, forced.stderr
    assert "mine" not in (out_dir / "lineage.svg").read_text() and not (out_dir / "lineage.png").exists()


@pytest.mark.slow
def test_plot_progress_overlays_runs_into_the_current_folder(run_copy, tmp_path_factory, tmp_path):
    synthetic = shared_synthetic_run(tmp_path_factory, 60)
    here = tmp_path / "here"
    here.mkdir()
    out = script("plot_progress.py", str(run_copy), str(synthetic), "--formats", "png", cwd=here)
    assert out.returncode == 0, out.stderr
    assert (here / "progress.png").is_file() and not (here / "progress.svg").exists()
    assert f"{run_copy.name}: 40 dev evaluations, best-so-far " in out.stdout
    one = script("plot_progress.py", str(run_copy), "--min-evals", "1")
    assert one.returncode == 0, one.stderr
    assert (run_copy / "progress.png").is_file() and (run_copy / "progress.svg").is_file()


@pytest.mark.parametrize(
    "name, args, message",
    [
        ("plot_lineage.py", ["/no/such/run"], "does not exist"),
        ("plot_lineage.py", ["README.md"], "not an archive"),
        ("plot_lineage.py", ["."], "not an archive"),
        ("plot_lineage.py", [], "required"),
        ("plot_progress.py", ["/no/such/run"], "does not exist"),
        ("plot_progress.py", [".", "--min-evals", "0"], "--min-evals"),
        ("plot_progress.py", ["README.md", "--formats", "pdf"], "--formats"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(name, args, message):
    out = script(name, *args)
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stderr.startswith("error: ") and out.stderr.count("\n") == 1, out.stderr
    assert message in out.stderr and "Traceback" not in out.stderr
