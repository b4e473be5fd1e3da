"""A full disk, on a small tmpfs of the test's own: a search stops in one line (exit 2) that names the folder and
says how to go on, its archive reads, and once space is freed a resume ends at exactly its budget; a run that
cannot even be created keeps nothing; a snapshot export, the report and a plot say the same in one line.

The disk fills at a moment chosen by an event, not a time: the search has stored its first evaluations (read
through its live copy). Needs root to mount the tmpfs (CI runs as root); skips, saying so, elsewhere.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.conftest import REPO, small_instances

pytestmark = pytest.mark.slow
SIZE_MB = 24


@pytest.fixture
def disk(tmp_path):
    """A 24 MB tmpfs at tmp_path/disk, unmounted afterwards."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root (CI runs as root)")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SIZE_MB}m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def fill(folder: Path) -> Path:
    """Write zeros into folder/filler until the device says it is full; the filler's path.

    Unbuffered writes: a buffered file keeps the bytes a short write left over and raises ENOSPC again when it is
    closed (seen in CI when the search freed and took space while the filler wrote).
    """
    filler = folder / f"filler-{uuid.uuid4().hex[:6]}"
    block = b"\0" * (1 << 16)
    descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        while True:
            os.write(descriptor, block)  # a short write near the end, then ENOSPC
    except OSError as error:
        if error.errno != errno.ENOSPC:
            raise
    finally:
        os.close(descriptor)
    return filler


def clade(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="300")
    return subprocess.run([sys.executable, "-m", "clade", *args], cwd=cwd, env=env, capture_output=True, text=True)


def evaluations(run: Path) -> int:
    import clade as api

    try:
        return len(api.open_run(run).evaluations())
    except api.UserError:
        return 0


def test_a_search_whose_disk_fills_stops_in_one_line_and_resumes_to_its_budget(disk, tmp_path):
    instances = small_instances(tmp_path / "instances.json")
    argv = [sys.executable, "-m", "clade", "search", "--budget", "2000", "--instances", str(instances),
            "--sandbox", "process", "--run-dir", str(disk / "runs"), "--quiet"]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(REPO))
    search = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        waited, run = 0.0, None
        while run is None or evaluations(run) < 12:  # the event: the search stored its first evaluations
            assert search.poll() is None, search.communicate()
            time.sleep(0.1)
            waited += 0.1
            assert waited < 120, "the search stored nothing in 120 s"
            found = list((disk / "runs").glob("*/archive.duckdb")) if (disk / "runs").exists() else []
            run = found[0].parent if found else None
        filler = fill(disk)
        out, err = search.communicate(timeout=300)
    finally:
        if search.poll() is None:
            search.kill()
    lines = err.strip().splitlines()
    assert search.returncode == 2, err[-3000:]
    assert "Traceback" not in err
    assert lines[-1] == (
        f"error: no space left on the device holding {run}: the run stopped there, everything it had stored is "
        f"kept; free space, then resume: clade search --resume {run}"
    ), lines[-3:]
    shown = clade("runs", "show", str(run), cwd=tmp_path)  # the archive reads, full disk and all
    assert shown.returncode == 0, shown.stderr
    stored = evaluations(run)
    assert 12 <= stored < 2000
    filler.unlink()  # space freed
    budget = stored + 16
    resumed = clade("search", "--resume", str(run), "--budget", str(budget), "--quiet", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert f"{budget}/{budget} dev evaluations" in resumed.stdout


def test_a_run_the_full_disk_cannot_create_keeps_nothing(disk, tmp_path):
    fill(disk)
    done = clade("search", "--budget", "10", "--run-dir", str(disk / "runs"), "--sandbox", "process", cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line == (
        f"error: no space left on the device holding {disk / 'runs'} (creating the run; nothing of it was kept); "
        "free space, then start it again"
    )
    assert list((disk / "runs").iterdir()) == []


def test_export_report_and_plot_on_a_full_disk_say_so_in_one_line(disk, tmp_path):
    from tests.engine.plots.run_fixture import _build_small_run

    (tmp_path / "made").mkdir()
    _build_small_run(tmp_path / "made")
    (run,) = (tmp_path / "made" / "runs").iterdir()
    fill(disk)
    for args, doing in (
        (["snapshot", "export", str(run), str(disk / "snap")], "the export: nothing half-written is left"),
        (["report", str(run), "--out", str(disk / "report.html")], "writing the report"),
    ):
        done = clade(*args, cwd=tmp_path)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        (line,) = done.stderr.strip().splitlines()
        assert line == f"error: no space left on the device holding {disk} ({doing}); free space, then run it again"
    assert not any(p.name.startswith(".snap") for p in disk.iterdir())  # no half snapshot
    plotted = clade("plot", "lineage", str(run), "--out", str(disk / "plots"), cwd=tmp_path)
    assert plotted.returncode == 2 and "Traceback" not in plotted.stderr, plotted.stderr
    (line,) = plotted.stderr.strip().splitlines()
    assert line.startswith("error: no space left on the device holding ") and "(drawing the plot)" in line
