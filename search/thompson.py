"""Thompson sampling's argmax over Beta posteriors: the plain draw and an exact pruned one.

`thompson_argmax` draws theta_i ~ Beta(alpha_i, beta_i) for every candidate.
`pruned_argmax` returns (argmax, max) with exactly the same joint distribution
while drawing only the candidates that can still win. It needs, for every
candidate, an upper bound u_i at least the (1 - delta)-quantile of its Beta.
Think of each draw as theta_i = F_i^-1(U_i), U_i ~ U(0, 1), independent.
1. Optionally draw a lead first (a likely winner, chosen before any draw).
2. Go down the candidates in decreasing u_i, drawing them in blocks, until the
   next u_i is at most the best draw so far: that u is the cut. Only a band of
   the highest bounds is sorted (thresholds from a fixed sample of the
   bounds); if the band runs out above the best draw, the next band, four
   times larger, is sorted, down to everyone in the worst case.
3. A candidate below the cut (u_i <= cut <= best) not yet drawn can win only
   if U_i > 1 - delta, since otherwise theta_i <= F_i^-1(1 - delta) <= u_i.
   Which of them have U_i > 1 - delta: each independently with probability
   delta, i.e. K ~ Binomial(m, delta) positions (m - 1 and never the lead,
   with a lead), uniformly without replacement; a pick that was drawn in
   full in step 2 is ignored (its indicator is simply unused). For the
   others picked, U_i given
   U_i > 1 - delta is uniform on (1 - delta, 1), so theta_i is drawn as the
   point whose upper tail is delta * V, V ~ U(0, 1) (scipy's betainccinv; only
   for the picks whose upper tail at the best draw exceeds delta * V, the
   others cannot win, and one betainc tells them apart more cheaply). The
   others below the cut have theta_i <= u_i <= best: they never win, and are
   never drawn.
Which candidates are drawn in step 2 depends only on the draws already made,
which are independent of everyone else's, so the undrawn thetas keep their
own laws: the returned (argmax, max) is exact, not approximate (to the
floating-point accuracy of scipy's incomplete Beta inverse, as numpy's Beta
generator is to its own).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

# Safety margin: bounds are computed at delta * (1 - BOUND_MARGIN) so that the
# tail mass recomputed later is still <= delta after rounding.
BOUND_MARGIN = 1e-6
# A tail pick is inverted unless its upper tail at the best draw is below delta V by these margins
# (relative, and absolute for tiny tails near betainc's rounding): wide enough that no pick which
# could win is skipped, so skipping changes no result.
TAIL_MARGIN = 1e-6
TAIL_FLOOR = 1e-12


def thompson_argmax(alpha: np.ndarray, beta: np.ndarray, rng: np.random.Generator) -> tuple[int, float]:
    """Draw theta_i ~ Beta(alpha_i, beta_i) for every candidate; return (argmax index, its draw).

    One vectorized draw per candidate (about 5 ms at 100k on 2 cores).
    """
    if len(alpha) == 0:
        raise ValueError("no candidates to sample")
    theta = rng.beta(alpha, beta)
    best = int(np.argmax(theta))
    return best, float(theta[best])


def beta_upper_bound(alpha: np.ndarray, beta: np.ndarray, delta: float) -> np.ndarray:
    """u with P(theta > u) = delta * (1 - BOUND_MARGIN) for theta ~ Beta(alpha, beta), elementwise.

    The bound also holds (tail <= delta) for any Beta(a, b) with a <= alpha and
    b >= beta: the Beta law is stochastically increasing in a, decreasing in b.
    """
    from scipy.special import betainccinv

    return betainccinv(
        np.asarray(alpha, dtype=np.float64), np.asarray(beta, dtype=np.float64), delta * (1.0 - BOUND_MARGIN)
    )


@dataclass
class PruneStats:
    """What one pruned draw did (for the benchmark and tests)."""

    candidates: int = 0
    drawn: int = 0  # full Beta draws: the lead and everyone above the cut
    bands: int = 0  # passes over the bounds to find the next highest ones
    picked: int = 0  # Binomial picks (U_i > 1 - delta) below the cut: tail draws
    tail_won: bool = False  # the winner is one of those tail draws


Params = Callable[[np.ndarray], "tuple[np.ndarray, np.ndarray]"]

FIRST_BLOCK = 128
BLOCK_GROWTH = 2.0
SAMPLE = 2048


def pruned_argmax(
    m: int,
    upper: np.ndarray,
    params: Params,
    delta: float,
    rng: np.random.Generator,
    *,
    target: int | None = None,
    lead: int | None = None,
    stats: PruneStats | None = None,
) -> tuple[int, float]:
    """Exact Thompson argmax over m candidates given bounds (see the module docstring).

    upper: u_i for positions 0..m-1, each at least the (1 - delta)-quantile of its Beta.
    params(positions) -> (alpha, beta) of those positions: only the candidates
    drawn have their parameters looked up.
    target: about how many of the highest bounds to sort first (default: all);
    if the best draw is still below the rest, the next band is four times larger.
    lead: a position drawn first; it must not depend on this call's randomness.
    """
    if m == 0:
        raise ValueError("no candidates to sample")
    if not 0.0 < delta < 1.0:
        raise ValueError("delta must be in (0, 1)")
    stats = stats if stats is not None else PruneStats()
    stats.candidates, stats.drawn, stats.bands, stats.picked, stats.tail_won = m, 0, 0, 0, False
    run = _Running(params, rng, lead, stats)  # step 1: the lead, if any
    _draw_above_cut(run, m, upper, target)
    _draw_tail(run, m, delta)
    return run.winner, run.best


class _Running:
    """The running argmax of one pruned draw, and the positions drawn in full so far."""

    __slots__ = ("params", "rng", "lead", "stats", "winner", "best", "done")

    def __init__(self, params: Params, rng: np.random.Generator, lead: int | None, stats: PruneStats) -> None:
        self.params, self.rng, self.lead, self.stats = params, rng, lead, stats
        self.winner, self.best = -1, -np.inf
        self.done: list[np.ndarray] = []
        if lead is not None:  # drawn first, whatever the bounds say
            a, b = params(np.array([lead]))
            self.winner, self.best = lead, float(rng.beta(a[0], b[0]))
            stats.drawn = 1

    def draw(self, positions: np.ndarray) -> None:
        """Draw these positions in full (the lead is already drawn) and keep the best."""
        if self.lead is not None:
            positions = positions[positions != self.lead]
        if len(positions) == 0:
            return
        a, b = self.params(positions)
        theta = self.rng.beta(a, b)
        k = int(np.argmax(theta))
        self.stats.drawn += len(positions)
        self.done.append(positions)
        if theta[k] > self.best:
            self.winner, self.best = int(positions[k]), float(theta[k])


def _draw_above_cut(run: _Running, m: int, upper: np.ndarray, target: int | None) -> None:
    """Step 2: draw in decreasing bound until the next bound is at most the best draw (the cut)."""
    # bands of decreasing bounds: (h_1, inf), (h_2, h_1], ...; h_j from a fixed sample of the bounds
    sample = np.sort(upper[:: max(1, m // SAMPLE)])[::-1]
    target = m if target is None else max(1, target)
    ceiling = np.inf
    while ceiling > run.best:
        rank = int(np.ceil(target / m * len(sample)))
        floor = float(sample[rank]) if rank < len(sample) else -np.inf
        mask = upper > floor
        if ceiling < np.inf:
            mask &= upper <= ceiling
        band = np.flatnonzero(mask)
        band = band[np.argsort(-upper[band])]
        run.stats.bands += 1
        start, block = 0, FIRST_BLOCK
        while start < len(band) and upper[band[start]] > run.best:  # the next bound is the cut
            run.draw(band[start : start + block])
            start, block = start + block, int(BLOCK_GROWTH * block)
        if start < len(band):
            return  # cut = upper[band[start]] <= best: everyone undrawn is at or below it
        ceiling, target = floor, 4 * target  # the band ran out above the best draw: the next one


def _draw_tail(run: _Running, m: int, delta: float) -> None:
    """Step 3: below the cut, only those with U_i > 1 - delta can win; draw them in their upper tail."""
    from scipy.special import betainc, betainccinv

    rng, lead = run.rng, run.lead
    others = m - (lead is not None)
    picks_n = int(rng.binomial(others, delta)) if others else 0
    if picks_n == 0:
        return
    picks = rng.choice(others, size=picks_n, replace=False)
    if lead is not None:
        picks = picks + (picks >= lead)  # positions other than the lead, uniformly
    if run.done:  # those drawn in full need no tail draw
        drawn = np.sort(np.concatenate(run.done))
        at = np.minimum(np.searchsorted(drawn, picks), len(drawn) - 1)
        picks = picks[drawn[at] != picks]
    run.stats.picked = len(picks)
    if len(picks) == 0:
        return
    a, b = run.params(picks)
    tail = delta * rng.random(len(picks))  # given U > 1 - delta: theta is the point with upper tail delta * V
    # theta_i > best iff the upper tail at best exceeds tail_i: one incomplete Beta (betainc, several times
    # cheaper than its inverse) rules out most picks; only those that may win, with a margin for rounding,
    # are inverted, and the comparison below is the one on every pick, so the result is the same
    may_win = 1.0 - betainc(a, b, run.best) > tail * (1.0 - TAIL_MARGIN) - TAIL_FLOOR
    if not may_win.any():
        return
    picks, a, b, tail = picks[may_win], a[may_win], b[may_win], tail[may_win]
    theta = betainccinv(a, b, tail)
    k = int(np.argmax(theta))
    if theta[k] > run.best:
        run.winner, run.best, run.stats.tail_won = int(picks[k]), float(theta[k]), True


def thompson_argmax_pruned(
    alpha: np.ndarray,
    beta: np.ndarray,
    upper: np.ndarray,
    delta: float,
    rng: np.random.Generator,
    *,
    target: int | None = None,
    lead: int | None = None,
    stats: PruneStats | None = None,
) -> tuple[int, float]:
    """`thompson_argmax` with the same distribution, drawing only the candidates that can win.

    upper must be at least each candidate's (1 - delta)-quantile (e.g. `beta_upper_bound`).
    target: how many of the highest bounds to sort first (default: all).
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    beta = np.asarray(beta, dtype=np.float64)
    upper = np.asarray(upper, dtype=np.float64)
    return pruned_argmax(
        len(alpha), upper, lambda pos: (alpha[pos], beta[pos]), delta, rng, target=target, lead=lead, stats=stats
    )
