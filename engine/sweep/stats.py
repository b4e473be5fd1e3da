"""A sweep's statistics, on numbers alone (no archive): per group, the mean holdout score over its seeds with
a 95 % bootstrap interval, the seeds it won, its mean spend and wall time; per other group, the paired
difference from a baseline group over the seeds both have done, and the one sentence that says it.

The intervals are bootstrap percentile intervals (Efron & Tibshirani, "An Introduction to the Bootstrap",
Chapman & Hall 1993, ch. 13): the 2.5th and 97.5th percentiles of the mean over resamples of the seeds, drawn
with replacement (scipy.stats.bootstrap, method="percentile"). The resampling draws from a fixed seed, so the
same sweep always prints the same table. One value has no interval (said so); values all equal have the
interval [value, value] (every resample's mean is that value).

A paired difference pairs cells by seed: seed s of a group and seed s of the baseline share the seed's draws
(the mutator's, the policy's), so d = group - baseline removes what the seed alone does, and the interval is
the bootstrap of the mean of d over those seeds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from engine.errors import UserError

CONFIDENCE = 0.95
RESAMPLES = 9999
BOOTSTRAP_SEED = 20_240_607  # fixed: the same numbers give the same interval, run after run
TIE = 1e-12  # scores this close count as equal (means summed in another order differ in the last bits)


@dataclass(frozen=True)
class Outcome:
    """One done cell's numbers: its holdout score (None when its run chose no final node to measure), model
    spend in dollars, wall time in seconds, and the task's raw metric on holdout (None where there is none)."""

    group: str
    seed: int
    score: float | None
    dollars: float = 0.0
    wall_s: float | None = None
    raw: float | None = None


@dataclass(frozen=True)
class Estimate:
    """A mean over `n` values with its 95 % interval; `low` and `high` are None with fewer than two values."""

    mean: float | None
    low: float | None
    high: float | None
    n: int

    @property
    def has_interval(self) -> bool:
        return self.low is not None and self.high is not None


@dataclass(frozen=True)
class GroupRow:
    """A group's line of the table: cells done of cells, the score's estimate, seeds won of seeds contested
    (a seed two groups or more have a score for), mean raw metric, mean spend and wall time of its done cells."""

    group: str
    done: int
    cells: int
    score: Estimate
    won: int
    contested: int
    raw: float | None
    dollars: float | None
    wall_s: float | None

    @property
    def seeds_won(self) -> str:
        """'3/5', or '-' where no seed was contested."""
        return f"{self.won}/{self.contested}" if self.contested else "-"


@dataclass(frozen=True)
class Difference:
    """group - baseline, paired by seed, over the seeds both have a score for."""

    group: str
    baseline: str
    estimate: Estimate

    @property
    def paired(self) -> int:
        return self.estimate.n

    @property
    def verdict(self) -> str:
        """'above' or 'below' (the interval excludes 0), 'no difference', or 'too few seeds'."""
        e = self.estimate
        if not e.has_interval:
            return "too few seeds"
        assert e.low is not None and e.high is not None
        if e.low > 0:
            return "above"
        if e.high < 0:
            return "below"
        return "no difference"

    @property
    def sentence(self) -> str:
        """One plain sentence: 'dgm above hgm by 0.012 [0.004, 0.020] over 10 seeds', and the like."""
        g, b, e = self.group, self.baseline, self.estimate
        if self.verdict == "too few seeds":
            return f"{g} and {b}: too few seeds to tell ({e.n} paired)"
        assert e.mean is not None and e.low is not None and e.high is not None
        digits = decimals(e.mean, e.low, e.high)
        interval = f"[{e.low:.{digits}f}, {e.high:.{digits}f}] over {e.n} seeds"
        if self.verdict in ("above", "below"):
            return f"{g} {self.verdict} {b} by {abs(e.mean):.{digits}f} {interval}"
        return f"{g} and {b}: no difference beyond noise ({g} - {b} = {e.mean:.{digits}f} {interval})"


def decimals(*values: float) -> int:
    """Decimals to print: 3, or as many as show two significant digits of figures all under 0.01."""
    largest = max((abs(v) for v in values), default=0.0)
    if largest == 0 or largest >= 0.01:
        return 3
    return max(3, 1 - math.floor(math.log10(largest)))


def mean_interval(values: Sequence[float]) -> Estimate:
    """The mean of `values` with its 95 % bootstrap percentile interval (see the module's docstring)."""
    n = len(values)
    if n == 0:
        return Estimate(None, None, None, 0)
    mean = math.fsum(values) / n
    if n == 1:
        return Estimate(mean, None, None, 1)
    if max(values) - min(values) <= TIE * max(1.0, abs(mean)):
        return Estimate(mean, mean, mean, n)  # every resample's mean is this value
    import numpy as np
    from scipy.stats import bootstrap

    result = bootstrap(
        (np.asarray(values, dtype=float),),
        lambda sample, axis: np.mean(sample, axis=axis),
        vectorized=True,
        n_resamples=RESAMPLES,
        confidence_level=CONFIDENCE,
        method="percentile",
        rng=np.random.default_rng(BOOTSTRAP_SEED),
    )
    interval = result.confidence_interval
    return Estimate(mean, float(interval.low), float(interval.high), n)


def scores_by_group(outcomes: Sequence[Outcome]) -> dict[str, dict[int, float]]:
    """{group: {seed: holdout score}} of the outcomes that have a score."""
    table: dict[str, dict[int, float]] = {}
    for o in outcomes:
        if o.score is not None:
            table.setdefault(o.group, {})[o.seed] = o.score
    return table


def seeds_won(scores: Mapping[str, Mapping[int, float]]) -> dict[str, tuple[int, int]]:
    """{group: (seeds won, seeds contested)}: a seed is contested when two groups or more have a score for it;
    the group(s) with the highest score win it, each of a tie counted as a winner."""
    won = {group: [0, 0] for group in scores}
    seeds = sorted({seed for by_seed in scores.values() for seed in by_seed})
    for seed in seeds:
        there = {group: by_seed[seed] for group, by_seed in scores.items() if seed in by_seed}
        if len(there) < 2:
            continue
        top = max(there.values())
        for group, score in there.items():
            won[group][1] += 1
            won[group][0] += score >= top - TIE * max(1.0, abs(top))
    return {group: (w, c) for group, (w, c) in won.items()}


def _mean_of(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return math.fsum(present) / len(present) if present else None


def group_table(outcomes: Sequence[Outcome], cells: Mapping[str, int]) -> list[GroupRow]:
    """One row per group of `cells` ({group: its number of cells}, in the grid's order) from the done cells'
    outcomes; a group with none done has empty figures."""
    scores = scores_by_group(outcomes)
    won = seeds_won(scores)
    rows = []
    for group, count in cells.items():
        mine = [o for o in outcomes if o.group == group]
        by_seed = scores.get(group, {})
        w, c = won.get(group, (0, 0))
        rows.append(
            GroupRow(
                group=group,
                done=len(mine),
                cells=count,
                score=mean_interval([by_seed[s] for s in sorted(by_seed)]),
                won=w,
                contested=c,
                raw=_mean_of([o.raw for o in mine]),
                dollars=_mean_of([o.dollars for o in mine]),
                wall_s=_mean_of([o.wall_s for o in mine]),
            )
        )
    return rows


def paired_differences(outcomes: Sequence[Outcome], groups: Sequence[str], baseline: str) -> list[Difference]:
    """For each group but the baseline, in order: its paired difference from the baseline."""
    scores = scores_by_group(outcomes)
    base = scores.get(baseline, {})
    out = []
    for group in groups:
        if group == baseline:
            continue
        mine = scores.get(group, {})
        seeds = sorted(set(mine) & set(base))
        out.append(Difference(group, baseline, mean_interval([mine[s] - base[s] for s in seeds])))
    return out


def choose_baseline(groups: Sequence[str], asked: str | None, default: str | None = None) -> str:
    """The baseline group: the one asked for (a UserError naming the groups when there is no such group),
    else the sweep's own (`default`) when it is one of the groups, else the first group."""
    if asked is not None:
        if asked not in groups:
            from engine.words import did_you_mean

            raise UserError(
                f"no group {asked!r} in this sweep{did_you_mean(asked, list(groups))}; its groups: {', '.join(groups)}"
            )
        return asked
    if default is not None and default in groups:
        return default
    if not groups:
        raise UserError("this sweep has no groups")
    return groups[0]
