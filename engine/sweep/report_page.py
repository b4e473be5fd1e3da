"""A sweep's report: one self-contained HTML file (`clade report SWEEP` -> SWEEP/report.html) to read a sweep
in a browser, offline.

It holds what `clade sweep show` prints (the header, the groups' table, the paired differences and their
sentences), every cell with its status and figures, linked (a relative link) to its run's own report where
that was written (`clade report SWEEP/cells/<cell>`), and the progress curves as inline SVG drawn here:
per group the mean best-so-far dev score and its 95 % band (engine/sweep/curves.py), against dev evaluations
and, for model runs, against dollars. Nothing is fetched: no script, no font, no URL in any src or href.

The page carries a mark (its generator meta tag); a file of the report's name without it (one the user made)
is never replaced: UserError, one line.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from engine.errors import UserError

if TYPE_CHECKING:
    from engine.sweep.curves import Curve
    from engine.sweep.results import CellResult, SweepResults
    from engine.sweep.stats import Difference, GroupRow

REPORT = "report.html"
MARK = "Clade sweep report"  # the generator meta tag's content: a file that has it is ours to replace
_HEAD_BYTES = 4096
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
WIDTH, HEIGHT = 900, 380
MARGIN = {"left": 64, "right": 220, "top": 16, "bottom": 48}  # the legend in the right margin


def write_report(sweep_path: str | Path, out: str | Path | None = None, baseline: str | None = None) -> Path:
    """Write the sweep's report to `out` (default: SWEEP/report.html) and return its path. A file there that
    this did not write is left alone: UserError."""
    from engine.sweep import stats
    from engine.sweep.curves import cell_series, group_curves
    from engine.sweep.results import read_results
    from engine.whole_file import write_text_whole

    results = read_results(sweep_path)
    sweep = results.sweep
    target = Path(out) if out else sweep.folder / REPORT
    check_target(target)
    chosen = stats.choose_baseline(sweep.groups, baseline, sweep.baseline)
    outcomes = results.outcomes()
    series = cell_series(results)
    page = render_page(
        results,
        stats.group_table(outcomes, results.cells_per_group()),
        stats.paired_differences(outcomes, sweep.groups, chosen),
        (group_curves(series, sweep.groups, "evaluations"), group_curves(series, sweep.groups, "dollars")),
        chosen,
        target,
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    write_text_whole(target, page)
    return target


def check_target(target: Path) -> None:
    """UserError when `target` is a folder, or a file this module did not write."""
    if target.is_dir():
        raise UserError(f"{target} is a folder; give the report's file name (--out report.html)")
    if not target.exists():
        return
    try:
        with open(target, "rb") as fh:
            head = fh.read(_HEAD_BYTES)
    except OSError as exc:
        raise UserError(f"cannot read {target}: {exc.strerror or exc}") from None
    if MARK.encode() not in head:
        raise UserError(f"{target} exists and is not a sweep report Clade wrote; remove it, or give --out another file")


def render_page(
    results: SweepResults,
    rows: Sequence[GroupRow],
    differences: Sequence[Difference],
    curves: tuple[Sequence[Curve], Sequence[Curve]],
    baseline: str,
    target: Path,
) -> str:
    """The whole page as text: `curves` against evaluations and against dollars, the baseline group's name,
    and where the page goes (its links are relative to it)."""
    from engine.sweep.show import header_lines

    by_evaluations, by_dollars = curves
    title = f"Clade sweep: {results.sweep.folder.name}"
    header = "\n".join(escape(line.strip()) for line in header_lines(results, str(results.sweep.folder)))
    charts = [chart_svg(by_evaluations, "dev evaluations spent", "best dev score so far", "by-evaluations")]
    if by_dollars:
        charts.append(chart_svg(by_dollars, "model dollars spent", "best dev score so far", "by-dollars", dollars=True))
    sentences = "".join(f"<li>{escape(d.sentence)}</li>" for d in differences)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="generator" content="{MARK}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title>
<style>{CSS}</style>
</head>
<body>
<h1>{escape(title)}</h1>
<pre class="sub">{header}</pre>
<h2>Groups</h2>
{groups_html(rows, results.raw_metric, baseline)}
{differences_html(differences)}
<ul class="sentences">{sentences}</ul>
<h2>Progress</h2>
<p class="note">Best dev score so far, mean over each group's done cells; the band is a 95 % bootstrap interval
of that mean (none for a group of one cell).</p>
{"".join(charts)}
<h2>Cells</h2>
{cells_html(results, target)}
</body>
</html>
"""


def _table(columns: Sequence[str], rows: Sequence[Sequence[str]], css: str) -> str:
    head = "".join(f"<th>{escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f'<table class="{css}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def groups_html(rows: Sequence[GroupRow], raw_metric: str | None, baseline: str) -> str:
    from engine.sweep.show import group_cells, group_columns

    compared = baseline if len(rows) > 1 else ""  # one group: no baseline to name
    texts = [[escape(c) for c in group_cells(row, raw_metric, compared)] for row in rows]
    return _table(group_columns(raw_metric), texts, "groups")


def differences_html(differences: Sequence[Difference]) -> str:
    from engine.sweep.show import DIFFERENCE_COLUMNS, difference_cells

    if not differences:
        return ""
    texts = [[escape(c) for c in difference_cells(d)] for d in differences]
    return "<h2>Paired differences (group - baseline, by seed)</h2>" + _table(DIFFERENCE_COLUMNS, texts, "differences")


def cells_html(results: SweepResults, target: Path) -> str:
    """Every cell: its values, status, figures, and a link to its run's report where there is one."""
    from engine.sweep.show import money, number

    axes = [axis.name for axis in results.sweep.axes]
    raw = [f"holdout {results.raw_metric}"] if results.raw_metric else []
    columns = ["cell", *axes, "seed", "status", "final node", "holdout score", *raw, "dev evals", "spend", "wall s"]
    rows = []
    for c in results.cells:
        rows.append(
            [
                _cell_link(c, target),
                *(escape(str(c.settings.get(a))) for a in axes),
                str(c.seed),
                escape(c.status),
                "-" if c.final_node is None else f"#{c.final_node}",
                number(c.holdout),
                *([number(c.holdout_raw)] if raw else []),
                f"{c.dev_evaluations}/{'-' if c.budget is None else c.budget}",
                money(c.dollars),
                number(c.wall_s, 1),
            ]
        )
    return _table(columns, rows, "cells")


def _cell_link(cell: CellResult, target: Path) -> str:
    """The cell's name, linked to its run's report (a path relative to the page) when that file is there."""
    name = escape(cell.cell)
    if cell.run_path is None or not (cell.run_path / REPORT).is_file():
        return name
    href = os.path.relpath((cell.run_path / REPORT).resolve(), target.resolve().parent)
    return f'<a href="{escape(Path(href).as_posix())}">{name}</a>'


# ----- the charts: inline SVG ----------------------------------------------------------------------------


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About `count` round values (1, 2 or 5 times a power of ten apart) covering [low, high]."""
    import math

    if not math.isfinite(low) or not math.isfinite(high):
        return []
    if high <= low:
        return [low]
    raw = (high - low) / max(count, 1)
    power = 10 ** math.floor(math.log10(raw))
    scaled = raw / power  # in [1, 10): the round step nearest it
    step = power * (1 if scaled < 1.5 else 2 if scaled < 3 else 5 if scaled < 7 else 10)
    first = math.ceil(low / step - 1e-9) * step
    ticks = []
    value = first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 12))
        value += step
    return ticks


def _bounds(curves: Sequence[Curve]) -> tuple[float, float, float, float]:
    """(x0, x1, y0, y1) holding every curve's mean and band, padded a little on y."""
    import numpy as np

    xs = np.concatenate([c.x for c in curves]) if curves else np.zeros(0)
    ys = np.concatenate([np.concatenate([c.mean, c.low, c.high]) for c in curves]) if curves else np.zeros(0)
    ys = ys[np.isfinite(ys)]
    x0, x1 = (float(xs.min()), float(xs.max())) if len(xs) else (0.0, 1.0)
    y0, y1 = (float(ys.min()), float(ys.max())) if len(ys) else (0.0, 1.0)
    if x1 <= x0:
        x1 = x0 + 1
    pad = (y1 - y0) * 0.05 or 0.05
    return x0, x1, y0 - pad, y1 + pad


def _finite_runs(*columns) -> list[list[int]]:
    """Runs of consecutive indices where every column is finite (a curve is NaN before every cell of its group
    has a value; a band is NaN for a group of one cell), each of two points or more."""
    import numpy as np

    finite = np.logical_and.reduce([np.isfinite(c) for c in columns])
    runs: list[list[int]] = [[]]
    for i, ok in enumerate(finite):
        if ok:
            runs[-1].append(i)
        elif runs[-1]:
            runs.append([])
    return [r for r in runs if len(r) > 1]


def chart_svg(curves: Sequence[Curve], x_label: str, y_label: str, css_id: str, dollars: bool = False) -> str:
    """One chart: per group a line for the mean and a translucent band, axes with ticks and labels, a legend."""
    if not curves:
        return f'<p class="note" id="{css_id}">No done cell yet: no curve to draw.</p>'
    x0, x1, y0, y1 = _bounds(curves)
    box = (MARGIN["left"], WIDTH - MARGIN["right"], HEIGHT - MARGIN["bottom"], MARGIN["top"])

    def at(x: float, y: float) -> str:
        px = box[0] + (x - x0) / (x1 - x0) * (box[1] - box[0])
        py = box[2] - (y - y0) / (y1 - y0) * (box[2] - box[3])
        return f"{px:.1f},{py:.1f}"

    parts = [_axes_svg(box, (x0, x1, y0, y1), (x_label, y_label), dollars)]
    for i, curve in enumerate(curves):
        colour = PALETTE[i % len(PALETTE)]
        for run in _finite_runs(curve.low, curve.high):
            outline = [at(curve.x[i], curve.high[i]) for i in run] + [at(curve.x[i], curve.low[i]) for i in run[::-1]]
            parts.append(f'<polygon class="band" fill="{colour}" points="{" ".join(outline)}"/>')
        for run in _finite_runs(curve.mean):
            points = " ".join(at(curve.x[i], curve.mean[i]) for i in run)
            title = f"<title>{escape(curve.group)}</title>"
            parts.append(f'<polyline class="mean" stroke="{colour}" points="{points}">{title}</polyline>')
    parts.append(_legend_svg(curves, box))
    label = f"{y_label} against {x_label}"
    return (
        f'<figure><svg id="{css_id}" class="chart" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'role="img" aria-label="{escape(label)}">{"".join(parts)}</svg>'
        f"<figcaption>{escape(label)}</figcaption></figure>"
    )


def _axes_svg(box: tuple[float, ...], span: tuple[float, ...], labels: tuple[str, str], dollars: bool) -> str:
    """The frame, the ticks with their values and grid lines, and the axes' labels."""
    left, right, bottom, top = box
    x0, x1, y0, y1 = span
    out = [f'<rect class="frame" x="{left}" y="{top}" width="{right - left}" height="{bottom - top}"/>']
    for x in nice_ticks(x0, x1):
        px = left + (x - x0) / (x1 - x0) * (right - left)
        text = f"${x:g}" if dollars else f"{x:g}"
        out.append(f'<line class="grid" x1="{px:.1f}" x2="{px:.1f}" y1="{top}" y2="{bottom}"/>')
        out.append(f'<text class="tick" x="{px:.1f}" y="{bottom + 16}" text-anchor="middle">{escape(text)}</text>')
    for y in nice_ticks(y0, y1):
        py = bottom - (y - y0) / (y1 - y0) * (bottom - top)
        out.append(f'<line class="grid" x1="{left}" x2="{right}" y1="{py:.1f}" y2="{py:.1f}"/>')
        out.append(f'<text class="tick" x="{left - 6}" y="{py + 4:.1f}" text-anchor="end">{y:g}</text>')
    middle = (left + right) / 2
    out.append(f'<text class="label" x="{middle}" y="{bottom + 38}" text-anchor="middle">{escape(labels[0])}</text>')
    out.append(
        f'<text class="label" transform="translate(16 {(top + bottom) / 2}) rotate(-90)" '
        f'text-anchor="middle">{escape(labels[1])}</text>'
    )
    return "".join(out)


def _legend_svg(curves: Sequence[Curve], box: tuple[float, ...]) -> str:
    """A swatch and the group's name (and its cells) per curve, in the margin right of the plot."""
    left, top = box[1] + 16, box[3]
    out = []
    for i, curve in enumerate(curves):
        y = top + 12 + 18 * i
        colour = PALETTE[i % len(PALETTE)]
        out.append(f'<rect x="{left}" y="{y - 9}" width="14" height="10" fill="{colour}"/>')
        name = f"{curve.group} ({curve.cells} {'cell' if curve.cells == 1 else 'cells'})"
        out.append(f'<text class="legend" x="{left + 20}" y="{y}">{escape(name)}</text>')
    return f'<g class="legend">{"".join(out)}</g>'


CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px auto; max-width: 1100px;
  padding: 0 16px; color: #1d232a; background: #fff; }
h1 { font-size: 22px; margin: 0 0 8px; } h2 { font-size: 17px; margin: 28px 0 8px; }
pre.sub { background: #f5f7f9; padding: 10px 12px; border-radius: 6px; font-size: 13px; white-space: pre-wrap; }
table { border-collapse: collapse; margin: 8px 0; font-variant-numeric: tabular-nums; }
th, td { border-bottom: 1px solid #e3e7eb; padding: 4px 10px; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
thead th { background: #f5f7f9; font-weight: 600; }
ul.sentences li { margin: 3px 0; } .note { color: #5b6570; font-size: 13px; }
figure { margin: 12px 0 20px; } figcaption { color: #5b6570; font-size: 13px; }
svg.chart .frame { fill: none; stroke: #9aa4ae; } svg.chart .grid { stroke: #eef1f4; }
svg.chart .tick, svg.chart .legend { font-size: 11px; fill: #3a434c; }
svg.chart .label { font-size: 12px; fill: #1d232a; }
svg.chart .band { fill-opacity: 0.18; stroke: none; } svg.chart .mean { fill: none; stroke-width: 2; }
a { color: #1f5fa8; }
"""
