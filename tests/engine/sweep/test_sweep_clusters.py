"""The same sweep with each cell as a Slurm job (the single-node Slurm of .ci/run, else one started here) and as
a Ray task (a local Ray) gives the table it gives here: one worker per cell makes a run reproducible from its
seed, wherever the cell runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, small_instances
from tests.engine.sweep.test_slurm_cells import slurm_conf  # noqa: F401 - the module's Slurm fixture

pytestmark = pytest.mark.slow
BUDGET = 14


def sweep(tmp_path: Path, where: str, *more: str, env: dict[str, str] | None = None) -> Path:
    instances = tmp_path / "instances.json"
    if not instances.exists():
        small_instances(instances, n_dev=3, n_holdout=2, n_items=60)
    args = [
        "sweep", "--task", "binpack", "--instances", str(instances), "--grid", "policy=hgm,greedy", "--seeds", "2",
        "--budget", str(BUDGET), "--sandbox", "process", "--sweep-dir", str(tmp_path / where), "--quiet", *more,
    ]  # fmt: skip
    environment = dict(env or os.environ, PYTHONPATH=str(REPO), LITELLM_LOCAL_MODEL_COST_MAP="True", COLUMNS="200")
    done = subprocess.run(
        [sys.executable, "-m", "clade", *args], env=environment, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (folder,) = (tmp_path / where).iterdir()
    return folder


def table(folder: Path) -> list[tuple]:
    """What a sweep's table is made of, cell by cell: all but times and paths."""
    from engine.sweep.results import read_results

    return [
        (c.group, c.seed, c.status, c.final_node, c.holdout, c.holdout_raw, c.dev_evaluations)
        for c in read_results(folder).cells
    ]


def sentences(folder: Path) -> list[str]:
    import clade

    return clade.open_sweep(folder).sentences()


def test_cells_as_slurm_jobs_give_the_local_table(tmp_path, slurm_conf):  # noqa: F811 - the fixture
    here = sweep(tmp_path, "local")
    there = sweep(tmp_path, "slurm", "--cells-on", "slurm", env=dict(os.environ, SLURM_CONF=slurm_conf))
    assert table(there) == table(here) and {row[2] for row in table(here)} == {"finished"}
    assert {row[-1] for row in table(here)} == {BUDGET}
    assert sentences(there) == sentences(here)
    assert any(log.read_text().strip() for log in there.glob("cells/*/search.log"))  # the jobs wrote their logs


@pytest.mark.ray
def test_cells_as_ray_tasks_give_the_local_table(tmp_path):
    pytest.importorskip("ray", reason="ray not installed: pip install -e '.[ray]'")
    here = sweep(tmp_path, "local")
    there = sweep(tmp_path, "ray", "--cells-on", "ray")
    assert table(there) == table(here) and {row[2] for row in table(here)} == {"finished"}
    assert sentences(there) == sentences(here)
