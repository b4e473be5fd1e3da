"""A sweep's cells as Slurm jobs (engine/sweep/slurm_cells.py) on a real single-node Slurm (the one SLURM_CONF
names, else one started here with scripts/slurm_local.py): a cell runs to its end, a cell stopped mid-run
stores its run as interrupted, a later sweep process reattaches to a job it did not submit, and an unreachable
cluster or a missing sbatch is one line."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from archive import ArchiveError
from engine.config.run_config import RunConfig
from engine.config.run_file import to_toml
from engine.errors import UserError
from engine.runinfo.reading import open_read_only
from engine.sweep.launch import LOG
from engine.sweep.manifest import run_folder
from tests.conftest import small_instances
from tests.engine.test_search_slurm import slurm_running

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

BOUND_S = 180  # for any one wait below: generous, a cell takes about 10 s


@pytest.fixture(scope="module")
def slurm_conf(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The slurm.conf of a Slurm that runs jobs, for the module (`slurm_running`)."""
    with slurm_running(tmp_path_factory, dict(os.environ)) as conf:
        yield conf


@pytest.fixture
def on_slurm(slurm_conf: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLURM_CONF", slurm_conf)


def cell(tmp_path: Path, name: str, budget: int) -> tuple[list[str], Path]:
    """(the search command, the cell folder) of a cell whose run.toml asks a binpack search of `budget`."""
    folder = tmp_path / "cells" / name
    folder.mkdir(parents=True)
    instances = small_instances(tmp_path / "instances.json", n_items=60)
    config = RunConfig.of(
        task="binpack", budget=budget, workers=1, sandbox="process", instances=str(instances), run_dir=str(folder)
    )
    (folder / "run.toml").write_text(to_toml(config))
    return ["python", "-m", "engine.search", "--config", str(folder / "run.toml"), "--quiet"], folder


def status(folder: Path) -> str:
    run = run_folder(folder)
    assert run is not None, (folder / LOG).read_text() if (folder / LOG).exists() else "no search.log"
    with open_read_only(run) as archive:
        return str(archive.run_row()["status"])


def started(folder: Path) -> bool:
    """The cell's search has begun its run: the archive exists and holds a node."""
    run = run_folder(folder)
    if run is None:
        return False
    try:
        with open_read_only(run) as archive:
            return archive.query("SELECT count(*) FROM nodes")[0][0] > 0
    except ArchiveError:
        return False  # not readable yet (being made)


def wait_for(what, why: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + BOUND_S
    while not what():
        assert time.monotonic() < deadline, why
        time.sleep(0.2)


def state(job_id: str) -> str:
    command = ["squeue", "-h", "-t", "all", "-j", job_id, "-o", "%T"]
    return subprocess.run(command, capture_output=True, text=True).stdout.strip()


def test_cells_run_as_slurm_jobs_stop_as_ctrl_c_and_reattach(tmp_path, on_slurm):
    from engine.sweep.slurm_cells import SlurmCell, SlurmCells

    clock = time.monotonic()
    short, short_folder = cell(tmp_path, "short", budget=6)
    long, long_folder = cell(tmp_path, "long", budget=5000)  # cannot finish before it is stopped
    first = SlurmCells(RunConfig.of(task="binpack"))
    short_job = first.start(short, short_folder, cpus=1)
    long_job = first.start(long, long_folder, cpus=1)
    recorded = json.loads((long_folder / "job.json").read_text())
    assert recorded["name"] == "clade-sweep-long" and recorded["job_id"].isdigit()
    wait_for(lambda: started(long_folder), "the long cell's search never began its run")

    # the sweep's process dies: a new one reattaches to the long cell's job, still running
    del first, long_job
    second = SlurmCells(RunConfig.of(task="binpack"))
    again = second.reattach(long_folder)
    assert isinstance(again, SlurmCell) and again.job_id == recorded["job_id"]
    assert second.reattach(tmp_path / "cells" / "nosuch") is None
    assert not again.ended()
    again.stop()
    wait_for(again.ended, "the stopped cell's job did not end")
    assert status(long_folder) == "interrupted", (long_folder / LOG).read_text()
    assert second.reattach(long_folder) is None  # it has ended: nothing to reattach to

    wait_for(short_job.ended, "the short cell's job did not end")
    assert status(short_folder) == "finished", (short_folder / LOG).read_text()
    assert state(json.loads((short_folder / "job.json").read_text())["job_id"]) in ("COMPLETED", "")
    assert "Run " in (short_folder / LOG).read_text()  # the search's output went to the cell's log
    second.close()
    print(f"slurm cells: {time.monotonic() - clock:.1f} s")


def test_kill_ends_a_cell_at_once(tmp_path, on_slurm):
    from engine.sweep.slurm_cells import SlurmCells

    argv, folder = cell(tmp_path, "killed", budget=5000)
    cells = SlurmCells(RunConfig.of(task="binpack"))
    job = cells.start(argv, folder, cpus=1)
    wait_for(lambda: started(folder), "the cell's search never began its run")
    job.kill()
    wait_for(job.ended, "the killed cell's job did not end")
    assert status(folder) == "running"  # killed, not stopped: its end was never stored (a resume goes on)


def test_an_unreachable_cluster_is_one_line(tmp_path, slurm_conf, monkeypatch):
    from engine.sweep.slurm_cells import SlurmCells

    text = Path(slurm_conf).read_text()
    dead = tmp_path / "slurm.conf"  # the same cluster with its controller at a port nobody listens on
    dead.write_text("\n".join("SlurmctldPort=9" if line.startswith("SlurmctldPort=") else line
                              for line in text.splitlines()) + "\n")  # fmt: skip
    monkeypatch.setenv("SLURM_CONF", str(dead))
    with pytest.raises(UserError) as caught:
        SlurmCells(RunConfig.of(task="binpack"))
    said = str(caught.value)
    assert "\n" not in said and said.startswith("--cells-on slurm: the Slurm cluster does not answer: "), said
    assert "Unable to contact slurm controller" in said


def test_options_sbatch_refuses_are_one_line(on_slurm):
    from engine.sweep.slurm_cells import SlurmCells

    with pytest.raises(UserError, match=r"^--cells-on slurm: the Slurm cluster has no partition 'nosuch'$"):
        SlurmCells(RunConfig.of(task="binpack", executor="slurm", slurm_partition="nosuch"))


def test_a_machine_without_sbatch_is_told_what_to_install(monkeypatch, tmp_path):
    from engine.sweep.slurm_cells import SlurmCells

    monkeypatch.setenv("PATH", str(tmp_path))  # no Slurm command on it
    with pytest.raises(UserError) as caught:
        SlurmCells(RunConfig.of(task="binpack", executor="slurm"))
    said = str(caught.value)
    assert "\n" not in said and "sbatch not found" in said and "apt-get install slurm-client" in said, said
    assert "[slurm]" in said, said
