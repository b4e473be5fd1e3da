"""A sweep's progress curves: per group, the best-so-far dev score against dev evaluations spent (and, for
model runs, against dollars spent), the mean over the group's done cells with a 95 % band.

Each cell's series is the progress plot's (engine/plots/progress.py, `progress_series`): at the t-th dev
evaluation, the highest own mean dev score among nodes evaluated on every dev instance, and the cumulative
model dollars when that evaluation finished. A cell's series is a step function of x: its value at x is the
one at the last evaluation at or before x, held after its last evaluation (a run that stopped early keeps its
best). The group's cells are put on a common grid of x (evaluation counts 1..the longest run, at most
`POINTS` of them; dollars 0..the most any cell spent), and at each point where every cell has a value:

- mean: the mean over the cells;
- band: the 95 % bootstrap percentile interval of that mean (the cells resampled with replacement, the same
  resample at every point so that a band is one curve's worth of draws; Efron & Tibshirani 1993, ch. 13),
  drawn from a fixed seed; a group of one cell has no band (low and high NaN).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

if TYPE_CHECKING:
    from engine.sweep.results import SweepResults

Axis = Literal["evaluations", "dollars"]
POINTS = 200  # grid points per curve: enough for a smooth line, few enough for a small page
RESAMPLES = 2000
BAND_SEED = 20_240_607


@dataclass(frozen=True, eq=False)
class CellSeries:
    """One cell's best-so-far dev score at each of its dev evaluations, and the dollars spent by then."""

    group: str
    seed: int
    best: np.ndarray
    dollars: np.ndarray

    @property
    def evals(self) -> np.ndarray:
        return np.arange(1, len(self.best) + 1)


@dataclass(frozen=True, eq=False)
class Curve:
    """A group's mean curve on its grid `x`, with the band [low, high] (NaN where there is none)."""

    group: str
    cells: int
    x: np.ndarray
    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray


def cell_series(results: SweepResults) -> list[CellSeries]:
    """The series of every done cell, read from its archive (the progress plot's reading)."""
    from engine.plots.progress import progress_series

    out = []
    for cell in results.done():
        if cell.run_path is None:
            continue
        series = progress_series(cell.run_path, max_points=1)  # one replay of the final rule: only `best` is used
        out.append(CellSeries(cell.group, cell.seed, series.best, series.dollars))
    return out


def value_at(xs: np.ndarray, ys: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """The step function through (xs, ys) (xs ascending) at each grid point: ys at the last xs <= point, NaN
    before the first."""
    if len(xs) == 0:
        return np.full(len(grid), np.nan)
    where = np.searchsorted(xs, grid, side="right") - 1
    return np.where(where >= 0, ys[np.clip(where, 0, None)], np.nan)


def evaluation_grid(series: Sequence[CellSeries]) -> np.ndarray:
    longest = max((len(s.best) for s in series), default=0)
    if longest == 0:
        return np.zeros(0)
    return np.unique(np.linspace(1, longest, num=min(longest, POINTS)).round())


def dollar_grid(series: Sequence[CellSeries]) -> np.ndarray:
    most = max((float(s.dollars[-1]) for s in series if len(s.dollars)), default=0.0)
    return np.linspace(0.0, most, num=POINTS) if most > 0 else np.zeros(0)


def mean_band(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean, low, high) over the rows of `values` (cells x points), NaN at a point some cell lacks; the
    band is the bootstrap percentile interval of the mean, every point from the same resamples."""
    complete = ~np.isnan(values).any(axis=0)
    filled = np.where(np.isnan(values), 0.0, values)
    mean = np.where(complete, filled.mean(axis=0), np.nan)
    n = values.shape[0]
    if n < 2:
        nothing = np.full(values.shape[1], np.nan)
        return mean, nothing, nothing.copy()
    rng = np.random.default_rng(BAND_SEED)
    picks = rng.integers(0, n, size=(RESAMPLES, n))
    resampled = filled[picks].mean(axis=1)  # resamples x points
    low, high = np.percentile(resampled, [2.5, 97.5], axis=0)
    return mean, np.where(complete, low, np.nan), np.where(complete, high, np.nan)


def group_curves(series: Sequence[CellSeries], groups: Sequence[str], x: Axis = "evaluations") -> list[Curve]:
    """Each group's curve (groups with no series left out; against dollars, only groups of model runs)."""
    if x == "dollars":
        series = [s for s in series if len(s.dollars) and s.dollars[-1] > 0]
        grid = dollar_grid(series)
    else:
        grid = evaluation_grid(series)
    curves = []
    for group in groups:
        mine = [s for s in series if s.group == group]
        if not mine or not len(grid):
            continue
        rows = [value_at(s.dollars if x == "dollars" else s.evals, s.best, grid) for s in mine]
        mean, low, high = mean_band(np.vstack(rows))
        curves.append(Curve(group, len(mine), grid, mean, low, high))
    return curves


def sweep_curves(results: SweepResults, x: Axis = "evaluations") -> list[Curve]:
    """The curves of a sweep's done cells against `x` ("evaluations" or "dollars")."""
    if x not in ("evaluations", "dollars"):
        from engine.errors import UserError

        raise UserError(f"curves are against 'evaluations' or 'dollars', not {x!r}")
    return group_curves(cell_series(results), results.sweep.groups, x)
