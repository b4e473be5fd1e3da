"""A sweep as Python sees it: `clade.Sweep`, what `clade.open_sweep` opens.

    sweep = clade.open_sweep("sweeps/binpack-policy-20250101-120000")
    sweep.table()            # per group: cells done, mean holdout score and its 95 % interval, seeds won, spend
    sweep.sentences()        # ["dgm above hgm by 0.012 [0.004, 0.020] over 10 seeds", ...]
    sweep.run("policy-dgm_s3").best()

A Sweep holds no database connection: each method reads the cells' archives read-only as it is called (a
cell still running through its search's live copy), so it always says where the sweep stands now and never
blocks a cell's search. The statistics use the cells that are done (finished, or stopped by their time
limit); the intervals are bootstrap percentile intervals drawn from a fixed seed (engine/sweep/stats.py).
The tables come back as pandas DataFrames when pandas is installed, else as pyarrow Tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.errors import UserError

if TYPE_CHECKING:
    from clade.run import Run
    from engine.sweep.results import SweepResults

Table = Any  # a pandas.DataFrame, or a pyarrow.Table where pandas is not installed


def open_sweep(path: str | Path) -> Sweep:
    """The sweep at `path` (a sweep folder, what `clade sweep` made, or its sweep.json); UserError otherwise."""
    return Sweep(path)


class Sweep:
    """One sweep's folder, read-only. `path` is the sweep's folder; use `clade.open_sweep` to make one."""

    def __init__(self, path: str | Path) -> None:
        """`path`: a sweep folder or its sweep.json; a folder that is not a sweep: UserError."""
        from engine.sweep.manifest import read_manifest

        manifest = read_manifest(path)
        self.path: Path = manifest.folder.resolve()
        self.task: str = manifest.task
        self.groups: list[str] = manifest.groups
        self.seeds: tuple[int, ...] = manifest.seeds

    # ----- tables ----------------------------------------------------------------------------------------
    def cells(self) -> Table:
        """One row per cell, in the grid's order: cell, group, seed, one column per axis, status, final_node,
        holdout (the final node's mean holdout score, done cells only), holdout_raw (the task's raw metric
        on holdout, e.g. binpack's excess %, where there is one), dev_evaluations, budget, dollars, tokens,
        wall_s, run_path (None before the cell's search started)."""
        results = self._results()
        axes = [axis.name for axis in results.sweep.axes]
        rows = [
            {
                "cell": c.cell,
                "group": c.group,
                "seed": c.seed,
                **{axis: c.settings.get(axis) for axis in axes},
                "status": c.status,
                "final_node": c.final_node,
                "holdout": c.holdout,
                "holdout_raw": c.holdout_raw,
                "dev_evaluations": c.dev_evaluations,
                "budget": c.budget,
                "dollars": c.dollars,
                "tokens": c.tokens,
                "wall_s": c.wall_s,
                "run_path": None if c.run_path is None else str(c.run_path.resolve()),
            }
            for c in results.cells
        ]
        return _table(rows)

    def table(self, baseline: str | None = None) -> Table:
        """One row per group, in the grid's order: group, baseline (whether it is the one compared with),
        done, cells, mean (holdout score over its seeds done), low and high (its 95 % interval; None with
        one seed), seeds_won and seeds_contested (seeds two groups or more have a score for; the group(s)
        with the highest score win a seed, ties each), holdout_raw (mean raw metric), dollars and wall_s
        (means over its done cells)."""
        from engine.sweep import stats

        results = self._results()
        chosen = self._baseline(results, baseline)
        rows = [
            {
                "group": r.group,
                "baseline": r.group == chosen,
                "done": r.done,
                "cells": r.cells,
                "mean": r.score.mean,
                "low": r.score.low,
                "high": r.score.high,
                "seeds_won": r.won,
                "seeds_contested": r.contested,
                "holdout_raw": r.raw,
                "dollars": r.dollars,
                "wall_s": r.wall_s,
            }
            for r in stats.group_table(results.outcomes(), results.cells_per_group())
        ]
        return _table(rows)

    def differences(self, baseline: str | None = None) -> Table:
        """One row per group but the baseline (default: the sweep's own, else its first group): group,
        baseline, paired (seeds done in both), mean, low and high (of group - baseline, paired by seed; the
        interval None with fewer than two paired seeds), verdict ('above', 'below', 'no difference', 'too
        few seeds') and sentence."""
        rows = [
            {
                "group": d.group,
                "baseline": d.baseline,
                "paired": d.paired,
                "mean": d.estimate.mean,
                "low": d.estimate.low,
                "high": d.estimate.high,
                "verdict": d.verdict,
                "sentence": d.sentence,
            }
            for d in self._differences(baseline)
        ]
        return _table(rows)

    def sentences(self, baseline: str | None = None) -> list[str]:
        """One plain sentence per comparison with the baseline, as `clade sweep show` prints them."""
        return [d.sentence for d in self._differences(baseline)]

    def curves(self, x: str = "evaluations") -> Table:
        """The groups' progress curves in long format: group, x, mean, low, high. `x`: "evaluations" (dev
        evaluations spent) or "dollars" (model dollars spent; groups of model runs only). mean: the best dev
        score so far, averaged over the group's done cells; low and high: its 95 % band (NaN for a group of
        one cell, and where some cell has no value yet)."""
        from engine.sweep.curves import sweep_curves

        rows = [
            {
                "group": c.group,
                "x": float(c.x[i]),
                "mean": float(c.mean[i]),
                "low": float(c.low[i]),
                "high": float(c.high[i]),
            }
            for c in sweep_curves(self._results(), x)  # type: ignore[arg-type]  # checked there: UserError
            for i in range(len(c.x))
        ]
        return _table(rows, ("group", "x", "mean", "low", "high"))

    # ----- one cell, the report -----------------------------------------------------------------------------
    def run(self, cell_name: str) -> Run:
        """The run of one cell (its name as `cells()` gives it), as `clade.open_run` opens it; UserError for
        no such cell, or a cell whose search has not started."""
        from clade.run import Run
        from engine.sweep.manifest import read_manifest, run_folder

        manifest = read_manifest(self.path)
        folder = run_folder(manifest.cell_folder(manifest.cell(cell_name)))
        if folder is None:
            raise UserError(f"cell {cell_name!r} of {self.path} has not started: no run yet")
        return Run(folder)

    def report(self, out: str | Path | None = None) -> Path:
        """Write the sweep's HTML report as `clade report SWEEP` does (default: SWEEP/report.html; a file
        there that Clade did not write is never replaced: UserError) and return its path."""
        from engine.sweep.report_page import write_report

        return write_report(self.path, out)

    def __repr__(self) -> str:
        return f"Sweep({str(self.path)!r}, task={self.task!r}, groups={self.groups!r})"

    # ----- reading ---------------------------------------------------------------------------------------
    def _results(self) -> SweepResults:
        from engine.sweep.results import read_results

        return read_results(self.path)

    def _baseline(self, results: SweepResults, asked: str | None) -> str:
        from engine.sweep.stats import choose_baseline

        return choose_baseline(results.sweep.groups, asked, results.sweep.baseline)

    def _differences(self, baseline: str | None) -> list:
        from engine.sweep.stats import paired_differences

        results = self._results()
        chosen = self._baseline(results, baseline)
        return paired_differences(results.outcomes(), results.sweep.groups, chosen)


def _table(rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None) -> Table:
    """Rows as a pandas DataFrame when pandas is installed, else as a pyarrow Table (`columns`: the names
    an empty table still has)."""
    import pyarrow as pa

    names = list(rows[0]) if rows else list(columns or ())
    arrow = pa.Table.from_pylist(list(rows)) if rows else pa.table({name: pa.array([], pa.null()) for name in names})
    try:
        import pandas  # noqa: F401 - only whether it is there: pyarrow converts
    except ImportError:
        return arrow
    return arrow.to_pandas()
