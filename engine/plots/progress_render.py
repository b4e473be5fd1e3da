"""Drawing progress series with matplotlib (Agg): best-so-far and final-rule score against
dev evaluations, and against LLM dollars when some run paid for calls.

One colour per config group. Solid: best-so-far; dashed: the final rule's
pick. A group of two or more runs draws its runs thin and its mean thick,
with a band of one standard deviation across the runs; on the dollars axis
each run that paid for model calls is drawn alone (their dollars differ, so
no mean is taken there).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from engine.plots.output import plot_title, save_figure
from engine.plots.progress import ProgressGroup, ProgressSeries, group_series
from engine.words import plural


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _draw_group(row, group: ProgressGroup, colour, money: bool) -> None:
    """One config group: each run (thin when pooled), and for two runs or more their mean and a band of one sd."""
    by_evals = row[0]
    pooled = len(group.members) > 1
    for s in group.members:
        width, alpha = (0.8, 0.35) if pooled else (1.8, 0.95)
        by_evals.step(s.evals, s.best, where="post", color=colour, lw=width, alpha=alpha)
        by_evals.step(s.evals, s.final, where="post", color=colour, lw=width * 0.8, alpha=alpha, ls="--")
        if money and s.has_cost:
            row[1].step(s.dollars, s.best, where="post", color=colour, lw=1.4, alpha=0.9)
            row[1].step(s.dollars, s.final, where="post", color=colour, lw=1.0, alpha=0.9, ls="--")
    if not pooled:
        return
    x = group.evals
    by_evals.step(x, group.best_mean, where="post", color=colour, lw=2.4)
    _band(by_evals, x, group.best_mean, group.best_sd, colour, alpha=0.18)
    by_evals.step(x, group.final_mean, where="post", color=colour, lw=1.8, ls="--")
    _band(by_evals, x, group.final_mean, group.final_sd, colour, alpha=0.08)


def _band(axes, x, mean, sd, colour, alpha: float) -> None:
    """A band of one standard deviation around a pooled mean, stepped like the runs."""
    axes.fill_between(x, mean - sd, mean + sd, step="post", color=colour, alpha=alpha, lw=0)


def _style_handles(series: Sequence[ProgressSeries]) -> list:
    """Legend lines saying what solid (best-so-far) and dashed (the final rule's pick) mean."""
    from matplotlib.lines import Line2D

    ks = sorted({s.min_evals for s in series})
    rules = sorted({s.final_rule for s in series})
    return [
        Line2D(
            [],
            [],
            color="#444444",
            lw=1.8,
            label=f"best-so-far: best mean of nodes with >= {'/'.join(map(str, ks))} dev evaluations",
        ),
        Line2D(
            [],
            [],
            color="#444444",
            lw=1.4,
            ls="--",
            label=_short("final rule's pick (its own mean): " + "; ".join(rules), 90),
        ),
    ]


def _draw(series: Sequence[ProgressSeries], groups: list[ProgressGroup]):
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    money = any(s.has_cost for s in series)
    fig, axes = plt.subplots(
        1, 2 if money else 1, figsize=(13 if money else 9, 5.6), squeeze=False, layout="constrained", sharey=True
    )
    by_evals = axes[0][0]
    colours = plt.get_cmap("tab10")
    handles = []
    for g, group in enumerate(groups):
        colour = colours(g % 10)
        _draw_group(axes[0], group, colour, money)
        if len(group.members) > 1:
            label = f"{group.label}: mean +- sd"
        else:
            label = f"{group.members[0].run_id}" + (f" ({group.label})" if len(groups) > 1 else "")
        handles.append(Line2D([], [], color=colour, lw=2.2, label=_short(label, 70)))
    handles += _style_handles(series)
    by_evals.set_xlabel("dev evaluations")
    by_evals.set_ylabel("mean dev score (own)")
    by_evals.grid(alpha=0.3)
    if money:
        axes[0][1].set_xlabel("LLM dollars spent (cumulative; runs that paid for calls)")
        axes[0][1].grid(alpha=0.3)
    fig.legend(
        handles=handles, loc="outside lower center", ncol=1 if len(handles) <= 4 else 2, fontsize=8, frameon=False
    )
    names = ", ".join(s.run_id for s in series)
    fig.suptitle(_short(f"Progress of {plural(len(series), 'run')}: {names}", 110), fontsize=10)
    return fig


def render_progress(
    series: Sequence[ProgressSeries], outputs: Iterable[str | Path], groups: list[ProgressGroup] | None = None
) -> list[Path]:
    """Draw the runs once and write each output (.png or .svg, by suffix); returns the paths."""
    fig = _draw(series, groups if groups is not None else group_series(series))
    title = plot_title("progress", ", ".join(s.run_id for s in series))
    return save_figure(fig, title, outputs)
