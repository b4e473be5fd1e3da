"""Where a sweep's cells run, by `--cells-on`: the launcher of each place (engine/sweep/launch.py says what a
launcher does). Apart from the launchers so that none of them imports another."""

from __future__ import annotations

from engine.config.run_config import RunConfig
from engine.sweep.launch import Launcher, LocalCells

CELLS_ON = ("local", "slurm", "ray")


def launcher(cells_on: str, config: RunConfig) -> Launcher:
    """The launcher `--cells-on` names; a cluster's is built from the sweep's shared settings (its partition and
    options for Slurm, its address for Ray)."""
    if cells_on == "slurm":
        from engine.sweep.slurm_cells import SlurmCells

        return SlurmCells(config)
    if cells_on == "ray":
        from engine.sweep.ray_cells import RayCells

        return RayCells(config)
    return LocalCells()
