"""From what a user asks (`--grid`, `--seeds`, settings, a run file's `[sweep]`) to a sweep: its folder, its
manifest and each cell's run file, every cell's configuration checked before anything runs; and the same
command given again finds the unfinished sweep it started instead of starting another.

A run file for a sweep is a run file with one more table:

    [search]
    task = "examples/my_task"
    budget = 60

    [sweep]
    seeds = 5                 # or a list: [0, 3, 7]
    baseline = "hgm"          # the group the others are compared with (default: the first)
    parallel = 2              # cells at once (default: CPUs / each cell's workers)

    [sweep.grid]
    policy = ["hgm", "dgm", "openevolve"]
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from engine.errors import UserError
from engine.sweep.grid import Axis, grid_from_table, parse_grid_flag, parse_seeds
from engine.sweep.manifest import DONE, Sweep, cell_status, sweeps_under, write_manifest

DEFAULT_SEEDS = 5  # a comparison needs several draws; the project's own benchmarks use five
CELL_WORKERS = 1  # one worker per cell unless given: then a cell's run is reproducible from its seed
SWEEP_KEYS = ("seeds", "baseline", "parallel", "grid")


@dataclass
class Asked:
    """A new sweep as the command line and a run file ask for it (the flags win over the file)."""

    settings: dict[str, Any] = field(default_factory=dict)  # shared by every cell, flat by name
    axes: list[Axis] = field(default_factory=list)
    seeds: str | None = None  # --seeds' text, or the file's count or list
    baseline: str | None = None
    parallel: int | None = None
    max_cost: float | None = None
    cells_on: str = "local"


def read_sweep_file(path: str, asked: Asked) -> Asked:
    """A run file's settings and its `[sweep]` table joined to what the flags asked (the flags win)."""
    from engine.config.run_file import load_toml, settings_of

    data = load_toml(path)
    table = data.pop("sweep", {})
    if not isinstance(table, dict):
        raise UserError(f"{path}: [sweep] must be a table (seeds, baseline, parallel, and [sweep.grid])")
    for key in table:
        if key not in SWEEP_KEYS:
            raise UserError(f"{path}: [sweep] {key} is not a sweep key; [sweep] takes: {', '.join(SWEEP_KEYS)}")
    from_file = settings_of(data, path)
    axes = grid_from_table(table.get("grid", {}), path)
    given_axes = {axis.name for axis in asked.axes}
    seeds = table.get("seeds")
    return replace(
        asked,
        settings={**from_file, **asked.settings},
        axes=[*asked.axes, *(axis for axis in axes if axis.name not in given_axes)],
        seeds=asked.seeds if asked.seeds is not None else _seeds_text(seeds, path),
        baseline=asked.baseline or table.get("baseline"),
        parallel=asked.parallel or table.get("parallel"),
    )


def _seeds_text(value: Any, path: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, list) and value and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return ",".join(map(str, value))
    raise UserError(f"{path}: [sweep] seeds must be a count (5) or a list of seeds ([0, 3, 7])")


def axes_of(flags: Sequence[str]) -> list[Axis]:
    axes = [parse_grid_flag(text) for text in flags]
    names = [axis.name for axis in axes]
    for name in names:
        if names.count(name) > 1:
            raise UserError(f"--grid {name} is given twice: list its values once (--grid {name}=a,b,c)")
    return axes


def plan(asked: Asked, sweep_dir: str) -> Sweep:
    """The sweep asked for, not yet on disk; every cell's configuration checked (one line naming the cell)."""
    from engine.config.arguments import config_of

    settings = dict(asked.settings)
    for name in ("max_cost", "run_dir"):
        settings.pop(name, None)
    settings.setdefault("workers", CELL_WORKERS)
    base = config_of(settings)
    settings = _paths_made_absolute(settings, base.search.task)
    seeds = parse_seeds(asked.seeds or str(DEFAULT_SEEDS), first=base.search.seed)
    settings.pop("seed", None)
    sweep = Sweep(
        folder=Path(sweep_dir),  # named when made (`make`)
        task=base.search.task,
        axes=tuple(asked.axes),
        seeds=seeds,
        given=settings,
        max_cost=asked.max_cost,
        cells_on=asked.cells_on,
    )
    _check_cells(sweep)
    groups = sweep.groups
    if asked.baseline is not None and asked.baseline not in groups:
        from engine.words import did_you_mean

        hint = did_you_mean(asked.baseline, groups)
        raise UserError(f"--baseline {asked.baseline!r} is not a group{hint}; the groups: {', '.join(groups)}")
    return replace(sweep, baseline=asked.baseline, parallel=asked.parallel or default_parallel(sweep))


def _check_cells(sweep: Sweep) -> None:
    for cell in sweep.cells:
        if cell.seed != sweep.seeds[0]:
            continue  # the seed changes no rule: one cell per group is enough
        try:
            sweep.config(cell).validate()
        except UserError as exc:
            values = [f"{name}={value}" for name, value in cell.settings.items() if name != "seed"]
            raise UserError(f"--grid {' '.join(values)}: {exc}" if values else str(exc)) from None


def _paths_made_absolute(settings: Mapping[str, Any], task: str) -> dict[str, Any]:
    """A task folder and the files a setting names, absolute: cells run (and resume) from other folders."""
    from tasks import TASKS

    made = dict(settings)
    if task not in TASKS and Path(task).expanduser().is_dir():
        made["task"] = str(Path(task).expanduser().resolve())
    for name in ("agent", "instances", "task_python"):
        value = made.get(name)
        if isinstance(value, str) and Path(value).expanduser().exists():
            made[name] = str(Path(value).expanduser().resolve())
    return made


def default_parallel(sweep: Sweep) -> int:
    """Cells at once: a cluster queues every cell itself; here, as many as the CPUs hold at each cell's workers."""
    if sweep.cells_on != "local":
        return len(sweep.cells)
    workers = int(sweep.given.get("workers") or CELL_WORKERS)
    return max(1, available_cpus() // workers)


def available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def same_unfinished(sweep: Sweep, sweep_dir: str) -> tuple[Sweep | None, Sweep | None]:
    """(an unfinished sweep of the same grid and settings under `sweep_dir`, a finished one), the latest of each."""
    unfinished = finished = None
    for found in sweeps_under(Path(sweep_dir)):
        if found.spec() != sweep.spec():
            continue
        if all(cell_status(found, cell) in DONE for cell in found.cells):
            finished = found
        else:
            unfinished = found
    return unfinished, finished


def make(sweep: Sweep) -> Sweep:
    """The sweep's folder under its sweep folder, named by task, axes and time, with its manifest and each cell's
    run file; never an existing folder."""
    from engine.config.run_file import to_toml

    root = sweep.folder
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    axes = "-".join(axis.name for axis in sweep.axes) or "seeds"
    base = f"{Path(sweep.task).name}-{axes}-{stamp}"
    folder, k = root / base, 1
    while folder.exists():
        k += 1
        folder = root / f"{base}-{k}"
    made = replace(sweep, folder=folder)
    try:
        write_manifest(made)
        for cell in made.cells:
            made.cell_folder(cell).mkdir(parents=True, exist_ok=True)
            (made.cell_folder(cell) / "run.toml").write_text(to_toml(made.config(cell)))
    except OSError as exc:
        from archive.errors import is_disk_full
        from engine.errors import no_space

        if is_disk_full(exc):
            raise no_space(root, "writing the sweep's manifest", then="start it again") from None
        raise UserError(f"cannot make the sweep's folder {folder}: {exc.strerror or exc}") from None
    return made
