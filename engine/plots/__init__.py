"""Plots of runs, each split as Optuna's visualization is: a pure data function of the archive
(what is drawn, tested on its own) and a renderer (matplotlib, imported only when drawing).

- lineage: `lineage_data(path) -> LineageData`, `render_lineage(data, outputs)` (lineage_render.py)
- progress: `progress_data(paths) -> list[ProgressSeries]`, `group_series(series)`,
  `render_progress(series, outputs)` (progress_render.py)

Entry points: scripts/plot_lineage.py and scripts/plot_progress.py (engine/plots/cli.py).
"""

from __future__ import annotations

from engine.plots.lineage import LineageData, LineageNode, lineage_data
from engine.plots.progress import (
    ProgressGroup,
    ProgressSeries,
    group_series,
    progress_data,
)

__all__ = [
    "LineageData",
    "LineageNode",
    "ProgressGroup",
    "ProgressSeries",
    "group_series",
    "lineage_data",
    "progress_data",
]
