"""A sweep's cells as Ray tasks (engine/sweep/ray_cells.py) on a local Ray: a cell runs to its end, a cell
stopped mid-run stores its run as interrupted, a killed one ends at once; an unreachable cluster or a missing
Ray is one line."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.config.run_config import RunConfig
from engine.errors import UserError
from engine.sandbox.ray_executor import ray_available
from tests.conftest import REPO
from tests.engine.sweep.test_slurm_cells import cell, started, status, wait_for

RAY_OK, RAY_WHY = ray_available()
pytestmark = [pytest.mark.ray]


@pytest.mark.slow
@pytest.mark.skipif(not RAY_OK, reason=RAY_WHY)
def test_cells_run_as_ray_tasks_and_stop_as_ctrl_c(tmp_path):
    import ray

    from engine.sweep.ray_cells import RayCell, RayCells

    clock = time.monotonic()
    ours = not ray.is_initialized()  # else RayCells uses the Ray this process has, and leaves it be
    short, short_folder = cell(tmp_path, "short", budget=6)
    long, long_folder = cell(tmp_path, "long", budget=5000)  # cannot finish before it is stopped
    killed, killed_folder = cell(tmp_path, "killed", budget=5000)
    cells = RayCells(RunConfig.of(task="binpack"))
    try:
        short_job = cells.start(short, short_folder, cpus=1)
        long_job = cells.start(long, long_folder, cpus=64)  # more than a local Ray has: asks for all of them
        wait_for(lambda: started(long_folder), "the long cell's search never began its run")
        assert not long_job.ended()
        long_job.stop()
        wait_for(long_job.ended, "the stopped cell's task did not end")
        assert status(long_folder) == "interrupted", (long_folder / "search.log").read_text()
        assert isinstance(long_job, RayCell) and long_job.exit_code() == 130  # the search's own Ctrl-C exit

        wait_for(short_job.ended, "the short cell's task did not end")
        assert status(short_folder) == "finished", (short_folder / "search.log").read_text()
        assert isinstance(short_job, RayCell) and short_job.exit_code() == 0
        assert "Run " in (short_folder / "search.log").read_text()  # the search's output went to the cell's log

        killed_job = cells.start(killed, killed_folder, cpus=1)
        wait_for(lambda: started(killed_folder), "the third cell's search never began its run")
        killed_job.kill()
        wait_for(killed_job.ended, "the killed cell's task did not end")
        assert status(killed_folder) == "running"  # killed, not stopped: its end was never stored
        assert cells.reattach(long_folder) is None  # a Ray task dies with its driver: nothing to find again
    finally:
        cells.close()
    assert ray.is_initialized() != ours  # the Ray it started is shut down, one it found is left alone
    print(f"ray cells: {time.monotonic() - clock:.1f} s")


@pytest.mark.skipif(not RAY_OK, reason=RAY_WHY)
def test_an_unreachable_ray_address_is_one_line(tmp_path):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # in a fresh process: a Ray already initialised here would be used as it is
    code = (
        "from engine.config.run_config import RunConfig\n"
        "from engine.errors import UserError\n"
        "from engine.sweep.ray_cells import RayCells\n"
        "try:\n"
        f"    RayCells(RunConfig.of(task='binpack', executor='ray', ray_address='127.0.0.1:{port}'))\n"
        "except UserError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (
        done.stdout.strip() == f"--cells-on ray: cannot reach the Ray cluster at 127.0.0.1:{port}: Connection refused"
    )


def test_a_machine_without_ray_is_told_how_to_install_it(monkeypatch):
    import engine.sandbox.ray_executor as ray_executor
    from engine.sweep.ray_cells import RayCells

    monkeypatch.setattr(ray_executor, "ray_available", lambda: (False, ray_executor.install_hint()))
    with pytest.raises(UserError) as caught:
        RayCells(RunConfig.of(task="binpack"))
    said = str(caught.value)
    assert "\n" not in said and said.startswith("--cells-on ray: ray not installed: pip install "), said
    assert "[ray]" in said, said


def test_importing_the_launcher_does_not_import_ray():
    code = "import sys, engine.sweep.ray_cells; print('ray' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], cwd=Path(REPO), capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr
