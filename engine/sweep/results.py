"""What each cell of a sweep has done, read from its run's archive (read-only; a running search through its
live copy, as `clade runs show` reads it): one `CellResult` per cell, in the grid's order.

A cell's holdout score is its run's final node's mean holdout score (the node of the run's last
`select_final` event, what `clade runs best` and `clade.Run.best()` hand over), and only for a cell whose
run is done (finished, or stopped by its time limit): a run still going or interrupted has not chosen its
final node yet. Its raw metric is the task's own figure on those holdout evaluations (binpack's "excess %",
a task folder's "combined_score"), where the task can be made here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from engine.sweep.grid import Cell
from engine.sweep.manifest import DONE, Sweep, read_manifest, run_folder
from engine.sweep.stats import Outcome

NOT_STARTED = "not started"
DAMAGED = "damaged"


@dataclass(frozen=True)
class CellResult:
    """One cell: where it stands and what its run spent and scored."""

    cell: str
    group: str
    seed: int
    settings: Mapping[str, Any]  # the grid's axes -> this cell's values (the seed apart)
    status: str  # 'not started', 'finished', 'time_limit', 'interrupted', 'running', 'stopped (killed?)', 'damaged'
    run_path: Path | None
    final_node: int | None = None
    holdout: float | None = None  # the final node's mean holdout score; None unless the run is done
    holdout_raw: float | None = None  # the task's raw metric on those evaluations, where it has one
    dev_evaluations: int = 0
    budget: int | None = None
    dollars: float = 0.0  # model spend: the sum of llm_calls.cost_usd
    tokens: int = 0  # tokens in and out, every call
    wall_s: float | None = None  # engine time summed over sessions (as `clade runs show` says it)

    @property
    def done(self) -> bool:
        return self.status in DONE

    def outcome(self) -> Outcome:
        return Outcome(self.group, self.seed, self.holdout, self.dollars, self.wall_s, self.holdout_raw)


@dataclass(frozen=True)
class SweepResults:
    """A sweep and its cells' results; `raw_metric` names the task's raw figure (None: none, or the cells'
    tasks differ)."""

    sweep: Sweep
    cells: tuple[CellResult, ...]
    raw_metric: str | None

    def done(self) -> list[CellResult]:
        return [c for c in self.cells if c.done]

    def outcomes(self) -> list[Outcome]:
        """The done cells' numbers, for the statistics (engine/sweep/stats.py)."""
        return [c.outcome() for c in self.done()]

    def cells_per_group(self) -> dict[str, int]:
        counts = {group: 0 for group in self.sweep.groups}
        for c in self.cells:
            counts[c.group] += 1
        return counts

    def counts(self) -> dict[str, int]:
        """Cells done, running, to go (not started, interrupted, killed: a resumed sweep runs them) and damaged."""
        out = {"done": 0, "running": 0, "to go": 0, "damaged": 0}
        for c in self.cells:
            key = "done" if c.done else c.status if c.status in ("running", DAMAGED) else "to go"
            out[key] += 1
        return out


def read_results(path: str | Path) -> SweepResults:
    """Every cell of the sweep at `path` (UserError, one line, for a folder that is not a sweep)."""
    sweep = read_manifest(path)
    tasks = _Tasks()
    cells = tuple(read_cell(sweep, cell, tasks) for cell in sweep.cells)
    names = {tasks.metric_of(c.run_path) for c in cells if c.run_path is not None}
    measured = any(c.holdout_raw is not None for c in cells)  # a task whose metrics lack its figure: no column
    return SweepResults(sweep, cells, names.pop() if len(names) == 1 and measured else None)


def read_cell(sweep: Sweep, cell: Cell, tasks: _Tasks | None = None) -> CellResult:
    """One cell's result (a cell of `sweep.cells`)."""
    from archive import ArchiveError, ArchiveLocked

    folder = run_folder(sweep.cell_folder(cell))
    axes = {k: v for k, v in cell.settings.items() if k != "seed"}
    unread = CellResult(cell.name, cell.group, cell.seed, axes, NOT_STARTED, folder)
    if folder is None:
        return unread
    try:
        return _read_run(unread, folder, tasks or _Tasks())
    except ArchiveLocked:  # a search holds it and has not written its live copy yet: it has only begun
        return replace(unread, status="running")
    except ArchiveError:
        return replace(unread, status=DAMAGED)


def _read_run(unread: CellResult, folder: Path, tasks: _Tasks) -> CellResult:
    """The cell's figures, from its run's archive (ArchiveError: it does not read)."""
    from engine.runinfo.reading import KILLED, final_choice, open_read_only

    with open_read_only(folder) as archive:
        status = str(archive.run_row().get("status", "")) or "running"
        if status == "running" and archive.live_as_of is None:
            status = KILLED  # stored running, but no search holds it: it died without writing its end
        choice = final_choice(archive)
        final = choice[0] if choice else None
        measured = status in DONE and final is not None  # a run still going has not chosen its final node
        config = archive.config()
        tasks.remember(folder, config)
        money = archive.llm_totals()
        return replace(
            unread,
            status=status,
            final_node=final,
            holdout=archive.holdout_mean(final)[0] if measured and final is not None else None,
            holdout_raw=_raw(archive, final, config, tasks) if measured else None,
            dev_evaluations=sum(archive.evaluation_status_counts("dev").values()),
            budget=config.get("budget"),
            dollars=float(money.cost_usd),
            tokens=int(money.tokens_in + money.tokens_out),
            wall_s=archive.wall_seconds(),
        )


def _raw(archive: Any, node: int | None, config: Mapping[str, Any], tasks: _Tasks) -> float | None:
    """The task's raw metric over the node's holdout evaluations (None: no task here, or no such figure)."""
    task = tasks.of(config)
    if task is None or node is None:
        return None
    metrics = [json.loads(m) for split, _, m in archive.scores_and_metrics(node) if split == "holdout" and m]
    value = task.raw_value([m for m in metrics if isinstance(m, dict) and m]) if metrics else None
    return None if value is None else float(value)


class _Tasks:
    """The tasks of a sweep's cells, each made once (by name, instances and target) to read its raw metric;
    a task this installation cannot make (an extra missing, a folder gone) has none."""

    def __init__(self) -> None:
        self.made: dict[tuple, Any] = {}
        self.by_run: dict[Path, str | None] = {}

    def of(self, config: Mapping[str, Any]) -> Any:
        key = (config.get("task"), config.get("instances"), config.get("target"))
        if key not in self.made:
            self.made[key] = _make_task(config)
        return self.made[key]

    def metric_of(self, run: Path) -> str | None:
        """The raw metric's name for a run read before (None for one whose task could not be made)."""
        return self.by_run.get(run)

    def remember(self, run: Path, config: Mapping[str, Any]) -> None:
        task = self.of(config)
        self.by_run[run] = None if task is None else str(task.raw_metric)


def _make_task(config: Mapping[str, Any]) -> Any:
    from engine.errors import UserError
    from tasks import make_task

    try:
        return make_task(str(config.get("task")), config.get("instances"), target=config.get("target"))
    except (ImportError, ValueError, OSError, UserError):
        return None
