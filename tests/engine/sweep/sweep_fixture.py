"""Sweeps shared by the tests of engine/sweep and clade.open_sweep, each built once per test session
(tests/parallel.py's `built_once`):

- `shared_sweep`: a real one, made as `clade sweep` lays it out: a manifest, then each cell's search
  (`python -m engine.search`, offline mutator, one worker, so each seed is deterministic) run into its cell's
  folder, the six cells side by side (policy hgm and greedy, seeds 0 to 2, budget 12 on three small dev
  instances: about ten seconds on two cores);
- `synthetic_sweep`: cells that are synthetic archives (engine/plots/synthetic.py) with priced model calls,
  for what only model runs show (the curves against dollars), in well under a second.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from engine.sweep.grid import Axis
from engine.sweep.manifest import Sweep, read_manifest, write_manifest
from tests.conftest import REPO, small_instances
from tests.parallel import built_once

BUDGET = 12
POLICIES = ("hgm", "greedy")
SEEDS = (0, 1, 2)


def _build_sweep(folder: Path) -> None:
    instances = small_instances(folder / "instances.json", n_dev=3, n_holdout=2, n_items=60)
    given = {"budget": BUDGET, "workers": 1, "sandbox": "process", "instances": str(instances)}
    sweep = Sweep(folder=folder / "sweep", task="binpack", axes=(Axis("policy", POLICIES),), seeds=SEEDS, given=given)
    write_manifest(sweep)
    env = dict(os.environ, PYTHONPATH=str(REPO), LITELLM_LOCAL_MODEL_COST_MAP="True")
    searches = []
    for cell in sweep.cells:
        argv = ["--task", "binpack", "--instances", str(instances), "--policy", str(cell.settings["policy"])]
        argv += ["--seed", str(cell.seed), "--budget", str(BUDGET), "--workers", "1", "--sandbox", "process"]
        argv += ["--quiet", "--run-dir", str(sweep.cell_folder(cell))]
        searches.append(
            subprocess.Popen(
                [sys.executable, "-m", "engine.search", *argv],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
        )
    for search in searches:
        output, _ = search.communicate(timeout=240)
        assert search.returncode == 0, output


def _build_synthetic_sweep(folder: Path) -> None:
    from engine.plots.synthetic import synthetic_archive

    sweep = Sweep(
        folder=folder / "sweep", task="binpack", axes=(Axis("policy", ("hgm", "dgm")),), seeds=SEEDS, given={}
    )
    write_manifest(sweep)
    for k, cell in enumerate(sweep.cells):
        run = sweep.cell_folder(cell) / f"run-{cell.name}"
        run.mkdir(parents=True)
        synthetic_archive(run / "archive.duckdb", n_nodes=40, seed=k, n_dev=4, n_holdout=2)


def shared_sweep(tmp_path_factory) -> Path:
    """The folder of the real sweep: six finished cells."""
    return built_once(tmp_path_factory, "shared-small-sweep", _build_sweep) / "sweep"


def synthetic_sweep(tmp_path_factory) -> Path:
    """The folder of a sweep of six synthetic finished model runs (policies hgm and dgm, seeds 0 to 2)."""
    return built_once(tmp_path_factory, "shared-synthetic-sweep", _build_synthetic_sweep) / "sweep"


def copy_of(sweep: Path, where: Path) -> Path:
    """A copy of a shared sweep to change (the shared one is read by every test)."""
    target = where / sweep.name
    shutil.copytree(sweep, target)
    return target


def set_status(sweep: Path, cell: str, status: str) -> None:
    """Store another status in a cell's run (as a search interrupted or killed would have left it)."""
    import duckdb

    from engine.sweep.manifest import run_folder

    manifest = read_manifest(sweep)
    folder = run_folder(manifest.cell_folder(manifest.cell(cell)))
    assert folder is not None
    with duckdb.connect(str(folder / "archive.duckdb")) as con:
        con.execute("UPDATE runs SET status = ?", [status])


def remove_run(sweep: Path, cell: str) -> None:
    """Take a cell's run away, as if its search had not started."""
    manifest = read_manifest(sweep)
    shutil.rmtree(manifest.cell_folder(manifest.cell(cell)))
