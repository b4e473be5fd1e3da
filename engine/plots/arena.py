"""An arena run's scores over rounds: arena.png and arena.svg (scripts/plot_arena.py).

For each finished round (its `arena_round` event) the round's champion code
agent is scored three ways (engine/arena/ledger.py): on the task's own dev
instances (*original*), on the dev set as it stood after that round, the
testers' confirmed instances included (*evolved*), and on holdout (fixed,
measured at the end of the run). A second, small panel shows the size of the
dev set after each round. `arena_info` is pure data; `render_arena` draws it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from archive import Archive, ArchiveError
from engine.plots.output import plot_title, save_figure
from engine.words import plural

KIND = "arena"


@dataclass(frozen=True)
class ArenaRound:
    round: int
    champion: int
    original: float | None  # the champion's mean over the task's own dev instances
    evolved: float | None  # its mean over the dev instances existing as of this round
    holdout: float | None  # its mean over holdout (None if it has no holdout score)
    dev_instances: int  # the dev set's size after this round


@dataclass(frozen=True)
class ArenaInfo:
    run_id: str
    mode: str  # the arena mode: single or tournament
    rounds: tuple[ArenaRound, ...]


def arena_info(archive: Archive | str | Path) -> ArenaInfo:
    """The per-round champion scores of an arena run (an open archive, or a run folder / archive file,
    opened read-only). ArchiveError in one line if it is not an arena run or no round has finished."""
    if not isinstance(archive, Archive):
        from engine.runinfo.reading import open_read_only

        with open_read_only(archive) as opened:
            return arena_info(opened)
    from engine.arena import ledger

    if not ledger.is_arena(archive):
        raise ArchiveError(f"{archive.run_id} is not an arena run (it was not started with --arena)")
    records = ledger.rounds(archive)
    if not records:
        raise ArchiveError(f"arena run {archive.run_id} has no finished round yet")
    rows = []
    for detail in records:
        number, champion = int(detail["round"]), int(detail["champion"])
        rows.append(
            ArenaRound(
                round=number,
                champion=champion,
                original=ledger.dev_mean(archive, champion, up_to_round=0),
                evolved=ledger.dev_mean(archive, champion, up_to_round=number),
                holdout=archive.mean_score(champion, "holdout", first_repeat=True),
                dev_instances=int(detail["dev_instances"]),
            )
        )
    return ArenaInfo(run_id=archive.run_id, mode=str(archive.config().get("arena")), rounds=tuple(rows))


def _percent(values: Iterable[float | None]) -> list[float]:
    return [float("nan") if v is None else 100.0 * v for v in values]


def _draw(info: ArenaInfo):
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, (scores, sizes) = plt.subplots(
        2, 1, figsize=(9, 6), sharex=True, layout="constrained", gridspec_kw={"height_ratios": [3, 1]}
    )
    x = [r.round for r in info.rounds]
    for label, values, style in (
        (
            "original dev set (the task's own instances)",
            [r.original for r in info.rounds],
            {"color": "tab:blue", "marker": "o"},
        ),
        (
            "evolved dev set (with the testers' confirmed tests, as of the round)",
            [r.evolved for r in info.rounds],
            {"color": "tab:orange", "marker": "s"},
        ),
        (
            "holdout (fixed, measured at the end)",
            [r.holdout for r in info.rounds],
            {"color": "tab:green", "marker": "^", "ls": "--"},
        ),
    ):
        scores.plot(x, _percent(values), lw=1.8, ms=5, label=label, **style)
    scores.set_ylim(-2, 108)
    scores.set_yticks(range(0, 101, 20))
    scores.set_ylabel("champion's mean score (%)")
    scores.grid(alpha=0.3)
    scores.legend(loc="lower left", fontsize=8, frameon=False)
    champions = [r.champion for r in info.rounds]
    if len(x) <= 20:
        for r in info.rounds:
            scores.annotate(f"node {r.champion}", (r.round, 104), ha="center", va="center", fontsize=7, color="#555555")
    sizes.bar(x, [r.dev_instances for r in info.rounds], width=0.6, color="#9e9e9e")
    sizes.set_ylabel("dev instances")
    sizes.set_xlabel("arena round (champion: the best code agent of the round by evolved dev score)")
    sizes.grid(alpha=0.3, axis="y")
    sizes.xaxis.set_major_locator(MaxNLocator(integer=True))
    sizes.yaxis.set_major_locator(MaxNLocator(integer=True))
    kept = f"champion node {champions[0]}" if len(set(champions)) == 1 else f"{len(set(champions))} champions"
    fig.suptitle(f"{plot_title(KIND, info.run_id)}\n{info.mode}, {plural(len(x), 'round')}, {kept}", fontsize=10)
    return fig


def render_arena(info: ArenaInfo, outputs: Iterable[str | Path]) -> list[Path]:
    """Draw the figure once and write each output (.png or .svg, by suffix); returns the paths."""
    fig = _draw(info)
    title = plot_title(KIND, info.run_id)
    return save_figure(fig, title, outputs)
