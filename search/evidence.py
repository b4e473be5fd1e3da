"""How much one evaluation counts: the evidence weight w of continuous scores.

HGM's posteriors treat an evaluation's score x in [0, 1] as one Bernoulli
trial: Beta(1 + s, 1 + f). That is right for pass/fail instances (HGM's
SWE-bench), and nearly flat for a task of one instance scored by a
continuous number: after its single evaluation, a node at 0.879 and one at
0.868 have posteriors Beta(1.88, 1.12) and Beta(1.87, 1.13), so Thompson
draws spread over the whole archive, broken children included.

Derivation (moment matching). A Beta posterior over n trials with mean m has
variance about m (1 - m) / n. If one evaluation of a node measures its mean
with noise variance v, n evaluations pin it down to v / n. Equal variances
give each evaluation the weight of

    w = m (1 - m) / v

Bernoulli trials: Beta(1 + w s, 1 + w f). For pass/fail scores v = m (1 - m)
and w = 1, HGM as published. For a deterministic program v = 0: the score is
the node's value, and w is capped at W_MAX (a posterior narrower than the
gaps between nodes would make Thompson sampling greedy; W_MAX = 64 keeps a
node 0.011 above another, 0.879 against 0.868, about a quarter of a posterior
standard deviation apart, so draws still explore among the good nodes while
broken ones (score 0) are practically never drawn).

Where v comes from. With one dev instance there is no other evaluation of
the same node to compare, so the engine re-runs the seed on it (a noise
probe, stored as an evaluation with `repeat` 1) and takes v from the two
runs: v = (x0 - x1)^2 / 2, 0 when the program is deterministic (when they
differ, more runs refine v, and the end of the budget re-measures the best
candidates for the final choice: search.remeasure). With several
dev instances w stays 1: their scores differ because the instances differ,
and a node's value is its mean over all of them, which HGM's widening and
per-instance evaluations already measure (the setting HGM was designed and
measured on; Clade's binpack figures are unchanged by this module).

Users: HGM (own Beta(1 + w s, 1 + w f) and the final epsilon-quantile; for
clades, when w > 1, Beta(1 + tau w q, 1 + tau w (1 - q)) with q the rank of
the clade's best mean among the archive's, over the nodes that realise their
clade's best, see `clade_best` and `frontier_ranks`), UCT (B as a child's value when w > 1, and an
exploration bonus shrunk by sqrt(w)),
DGM (the node's rank among the archive's means replaces its raw mean when
w > 1, a relative signal: sigmoid(10 (rank - 0.5)) still favours the upper
half as DGM's rule favours nodes above 50 % accuracy).
"""

from __future__ import annotations

import math

import numpy as np

from search.tree import TreeView

W_MAX = 64.0


def evidence_weight(mean: float, noise_var: float | None, w_max: float = W_MAX) -> float:
    """w = m (1 - m) / v, within [1, w_max]; 1 when the noise is unknown (None)."""
    if noise_var is None or not math.isfinite(noise_var):
        return 1.0
    m = min(max(mean, 0.0), 1.0)
    spread = m * (1.0 - m)
    if noise_var <= 0.0:
        return w_max
    return min(max(spread / noise_var, 1.0), w_max)


def probe_variance(first: float, second: float) -> float:
    """The noise variance two runs of one program on one instance estimate: (x0 - x1)^2 / 2."""
    return (first - second) ** 2 / 2.0


def clade_best(view: TreeView) -> np.ndarray:
    """Each node's clade value under continuous evidence: the best own mean dev score in its clade.

    HGM defines a node's clade-metaproductivity as what the best agent of its
    clade achieves (Wang et al. 2025, arXiv 2510.21614, section 3) and
    estimates it from the clade's pooled successes and failures, which suits
    pass/fail instances. With one deterministic number per node the pooled
    mean misleads: the best node's own failed children (most children are
    worse than their parent) dilute its clade below that of any fresh child,
    so the search drifts away from its best agents. The clade's best measured
    mean is the estimate the definition asks for, and with w > 1 the policies
    use it: Beta(1 + tau w B, 1 + tau w (1 - B)) in HGM, B as UCT's value.
    Nodes without an evaluation count as 0. One pass per tree level, children
    after parents (ids grow down the tree): O(n) numpy work, O(depth) calls.
    """
    n = view.n
    best = np.where(view.valid, view.mean(), 0.0)  # mean() is 0 where a node has no evaluation
    if n <= 1:
        return best
    depth, parent = view.depth, view.parent
    for level in range(int(depth.max()), 0, -1):
        nodes = np.flatnonzero(depth == level)
        np.maximum.at(best, parent[nodes], best[nodes])
    return best


def frontier_ranks(view: TreeView, candidates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """HGM's expansion under continuous evidence: (nodes to draw from, their clade value as a rank q).

    Which nodes. Every ancestor of the best agent has the same clade best B
    (`clade_best`), so Thompson draws over B split evenly along the path from
    the seed to it, and expanding the seed again only re-grows the seed's
    children. The clade's value is realised by its best agent, so the draw is
    over the candidates whose own mean is their clade's best (no better agent
    below them): each clade is represented by the node that achieves its value.
    Measured on circle_packing (budget 200, seeds 0-4, scripts/bench_continuous.py):
    2.3784 mean sum of radii with the whole path, 2.389 with this rule alone.

    Which value. q = the share of the archive's measured, valid nodes whose
    own mean is below B, over (that count - 1): 1 for the best agent. A rank is
    a relative signal, free of the metric's scale: circle packing's score
    min(sum / 2.636, 1) keeps good agents within 0.87-0.92, where the gaps
    between them are a fraction of a Beta(1 + 64 B, 1 + 64 (1 - B)) posterior's
    spread and draws would be nearly uniform over them; as a rank the best agent
    draws from Beta(1 + 64, 1) and one at the 90th percentile from
    Beta(58.6, 7.4), so the top tenth gets most expansions and the rest
    still some. With q: 2.4030 [2.3970, 2.4090] on the same benchmark.
    Returns the candidates kept (all of them if none qualifies) and their q.
    """
    best = clade_best(view)
    own = view.mean()
    realise = own[candidates] >= best[candidates]
    kept = candidates[realise] if realise.any() else candidates
    measured = np.sort(own[view.valid & (view.n_evals > 0)])
    q = np.searchsorted(measured, best[kept], side="left") / max(len(measured) - 1, 1)
    return kept, np.minimum(q, 1.0)
