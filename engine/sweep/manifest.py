"""A sweep's folder and its manifest: what was asked (the grid, the seeds, the settings every cell shares) and
where each cell's run lives. What each cell has done is read from its run's archive, never stored here, so a
sweep killed at any moment is described truly by its folder.

    sweeps/<task>-<axes>-<time>/
        sweep.json                    the manifest (written once, whole, by a rename)
        cells/<cell>/run.toml         the cell's whole configuration, as `clade search --config` reads it
        cells/<cell>/search.log       what its search printed (each start and resume appended)
        cells/<cell>/<run folder>/    an ordinary run folder: archive.duckdb, live copy, plots, report

sweep.json holds: format (1), clade_version, created_at (UTC, ISO 8601), task, axes ([[setting, [values]]],
in order), seeds, given (the settings given outside the grid, flat by name), baseline (a group's label, or
null: the first group), max_cost (the whole sweep's cap in dollars, or null), parallel, cells_on
(local, slurm or ray) and cells ([{name, group, settings}], settings being the axes' values and the seed).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine.config.run_config import RunConfig
from engine.errors import UserError
from engine.sweep.grid import Axis, Cell, cells_of

MANIFEST = "sweep.json"
FORMAT = 1
DONE = frozenset({"finished", "time_limit"})  # a cell's run that ended by itself: kept as it is on a resume


@dataclass(frozen=True)
class Sweep:
    """A sweep as its manifest says: what every cell shares, its grid, and where it lives."""

    folder: Path
    task: str
    axes: tuple[Axis, ...]
    seeds: tuple[int, ...]
    given: Mapping[str, Any]
    baseline: str | None = None
    max_cost: float | None = None
    parallel: int = 1
    cells_on: str = "local"
    created_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))

    @property
    def cells(self) -> list[Cell]:
        return cells_of(self.axes, self.seeds)

    @property
    def groups(self) -> list[str]:
        """The groups' labels in the grid's order."""
        return list(dict.fromkeys(cell.group for cell in self.cells))

    def cell(self, name: str) -> Cell:
        for cell in self.cells:
            if cell.name == name:
                return cell
        raise UserError(f"{self.folder}: no cell {name!r}; its cells: {', '.join(c.name for c in self.cells)}")

    def cell_folder(self, cell: Cell) -> Path:
        return self.folder / "cells" / cell.name

    def config(self, cell: Cell) -> RunConfig:
        """The cell's whole configuration: the shared settings, its own values, its folder as the run folder's home."""
        from engine.config.arguments import config_of

        return config_of({**self.given, **cell.settings, "run_dir": str(self.cell_folder(cell))})

    def spec(self) -> dict[str, Any]:
        """What makes two sweeps the same experiment: the same command run again finds this one by it."""
        return {
            "task": self.task,
            "axes": [[axis.name, list(axis.values)] for axis in self.axes],
            "seeds": list(self.seeds),
            "given": dict(self.given),
            "cells_on": self.cells_on,
        }

    def to_json(self) -> dict[str, Any]:
        from clade import __version__

        return {
            "format": FORMAT,
            "clade_version": __version__,
            "created_at": self.created_at,
            **self.spec(),
            "baseline": self.baseline,
            "max_cost": self.max_cost,
            "parallel": self.parallel,
            "cells": [{"name": c.name, "group": c.group, "settings": dict(c.settings)} for c in self.cells],
        }


def run_folder(cell_folder: Path) -> Path | None:
    """The run folder a cell's search made (the one subfolder holding an archive), or None before it made one."""
    if not cell_folder.is_dir():
        return None
    found = sorted(p.parent for p in cell_folder.glob("*/archive.duckdb"))
    return found[-1] if found else None


def cell_status(sweep: Sweep, cell: Cell) -> str:
    """'not started'; its run's status as stored ('finished', 'time_limit', 'interrupted'); 'running' while a
    search holds its archive; 'stopped (killed?)' for a run stored as running that no search holds (it died
    before writing its end); or 'damaged' for an archive that does not read."""
    folder = run_folder(sweep.cell_folder(cell))
    if folder is None:
        return "not started"
    from archive import ArchiveError, ArchiveLocked
    from engine.runinfo.reading import KILLED, open_read_only

    try:
        with open_read_only(folder) as archive:
            status = str(archive.run_row().get("status", "")) or "running"
            return KILLED if status == "running" and archive.live_as_of is None else status
    except ArchiveLocked:  # a search holds it and has not written its live copy yet: it has only begun
        return "running"
    except ArchiveError:
        return "damaged"


def write_manifest(sweep: Sweep) -> None:
    """The manifest, whole or not at all (a temporary file, then a rename)."""
    sweep.folder.mkdir(parents=True, exist_ok=True)
    path = sweep.folder / MANIFEST
    temporary = path.with_suffix(".json.part")
    temporary.write_text(json.dumps(sweep.to_json(), indent=1) + "\n")
    os.replace(temporary, path)


def is_sweep(path: str | Path) -> bool:
    return (Path(path) / MANIFEST).is_file()


def read_manifest(path: str | Path) -> Sweep:
    """The sweep of a folder (or of its sweep.json); a UserError (one line) for one that is not a sweep."""
    folder = Path(path)
    if folder.name == MANIFEST:
        folder = folder.parent
    manifest = folder / MANIFEST
    if not manifest.is_file():
        why = "no such folder" if not folder.exists() else f"no {MANIFEST} in it"
        raise UserError(f"{folder} is not a sweep ({why}); a sweep folder is what clade sweep made, under sweeps/")
    try:
        data = json.loads(manifest.read_text())
        if data.get("format") != FORMAT:
            raise UserError(f"{manifest}: a sweep of format {data.get('format')!r}; this Clade reads format {FORMAT}")
        axes = tuple(Axis(name, tuple(values)) for name, values in data["axes"])
        return Sweep(
            folder=folder,
            task=data["task"],
            axes=axes,
            seeds=tuple(int(s) for s in data["seeds"]),
            given=data["given"],
            baseline=data.get("baseline"),
            max_cost=data.get("max_cost"),
            parallel=int(data.get("parallel", 1)),
            cells_on=data.get("cells_on", "local"),
            created_at=data.get("created_at", ""),
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UserError(f"{manifest}: damaged sweep manifest ({type(exc).__name__}: {exc})") from None


def sweeps_under(root: Path) -> Sequence[Sweep]:
    """The sweeps in a folder of sweeps (`sweeps/`), oldest first; folders that are not sweeps are passed over."""
    found = []
    for manifest in sorted(root.glob(f"*/{MANIFEST}")):
        try:
            found.append(read_manifest(manifest.parent))
        except UserError:
            continue
    return found
