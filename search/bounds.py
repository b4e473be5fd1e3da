"""Per-node upper bounds on the HGM posteriors, kept in step with the tree, for pruned Thompson draws.

`search.thompson.pruned_argmax` draws exactly from Thompson sampling's argmax
while drawing only the candidates that can win, given for each candidate a
bound u_i at least the (1 - delta)-quantile of its Beta. This module keeps
those bounds for a tree, per family of posteriors: every node's own
Beta(1 + s, 1 + f), and its clade's Beta(1 + tau S, 1 + tau F) for a fixed tau.

A bound is computed with room for k_i more evaluations, k_i = floor(c sqrt(N_i)),
N_i the evaluations behind the posterior: u_i is the (1 - delta)-quantile of
Beta(1 + tau (S_i + k_i), 1 + tau F_i). An evaluation adds x <= 1 to S and
1 - x >= 0 to F, and the Beta law is stochastically increasing in its first
parameter and decreasing in its second, so u_i stays a valid bound until the
node has seen more than k_i further evaluations; only then is it recomputed.
An evaluation touches one node's own posterior and its ancestors' clade
posteriors, so upkeep is O(depth) cheap checks per evaluation plus about
sum over the path of 1 / (k + 1) quantile computations; a full build (the
first pruned draw on a big tree, or a new tau) is one vectorized pass.

The cache lives in `TreeStats.derived` and reads the tree's change log; it is
derived data, so the policy stays a pure function of the tree and the rng.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from search.thompson import PruneStats, beta_upper_bound, pruned_argmax, thompson_argmax
from search.tree import TreeStats, TreeView

DELTA = 1e-3  # about DELTA * m tail draws per pruned draw; larger: tighter bounds, fewer full draws
SLACK = 0.5  # room for k = floor(SLACK * sqrt(N)) further evaluations before a bound is recomputed
MIN_PRUNED = 4096  # below this many candidates the plain vectorized draw is as fast
MIN_TARGET = 1024  # bounds sorted first per draw, at least
RETRY_AFTER = 32  # when bounds do not prune (most candidates drawn), this many plain draws before trying again


@dataclass
class BoundFamily:
    """Bounds and validity limits for one family of posteriors, indexed by node id."""

    tau: float
    clade: bool  # clade sums (S, F, n_clade_evals) or own sums (s, f, n_evals)
    upper: np.ndarray = field(default_factory=lambda: np.zeros(0))
    limit: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # valid while N <= limit
    target: int = MIN_TARGET  # how many of the highest bounds the next draw sorts first
    skip: int = 0  # plain draws left before the pruned path is tried again
    recomputed: int = 0  # bounds computed so far (for the benchmark)
    kept_for: np.ndarray | None = None  # the tree's open node ids (TreeStats.open_node_ids) last gathered for
    kept: np.ndarray = field(default_factory=lambda: np.zeros(0))  # upper[kept_for], patched as bounds change

    def sums(self, tree: TreeStats) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self.clade:
            return tree.S, tree.F, tree.n_clade_evals
        return tree.s, tree.f, tree.n_evals

    def ensure_size(self, size: int) -> None:
        if len(self.upper) >= size:
            return
        upper = np.ones(size)
        upper[: len(self.upper)] = self.upper
        limit = np.full(size, -1, dtype=np.int64)  # -1: never computed
        limit[: len(self.limit)] = self.limit
        self.upper, self.limit = upper, limit

    def recompute(self, tree: TreeStats, nodes: np.ndarray, delta: float) -> None:
        if len(nodes) == 0:
            return
        s, f, counts = self.sums(tree)
        n_now = counts[nodes]
        room = np.floor(SLACK * np.sqrt(n_now))
        alpha = 1.0 + self.tau * (s[nodes] + room)
        self.upper[nodes] = beta_upper_bound(alpha, 1.0 + self.tau * f[nodes], delta)
        self.limit[nodes] = n_now + room.astype(np.int64)
        self.recomputed += len(nodes)
        kept_for = self.kept_for
        if kept_for is not None and len(kept_for):  # patch the gathered bounds of those among the kept ids
            at = np.minimum(np.searchsorted(kept_for, nodes), len(kept_for) - 1)
            hit = kept_for[at] == nodes
            self.kept[at[hit]] = self.upper[nodes[hit]]

    def upper_of(self, nodes: np.ndarray, tree: TreeStats) -> np.ndarray:
        """upper[nodes]. For the tree's open node ids (the same read-only array from one decision to the
        next until a node opens or closes) the gathered bounds are kept and patched in `recompute`, so a
        draw costs no O(n) gather; any other array is gathered afresh."""
        if nodes is self.kept_for:
            return self.kept
        gathered = self.upper[nodes]
        if nodes is tree.open_node_ids():
            self.kept_for, self.kept = nodes, gathered
        return gathered

    def stale(self, tree: TreeStats, nodes: np.ndarray) -> np.ndarray:
        counts = self.sums(tree)[2]
        return nodes[counts[nodes] > self.limit[nodes]]


class PosteriorBounds:
    """The bound families in use for one tree (own, and clade per tau), kept up to date by `sync`."""

    def __init__(self, tree: TreeStats, delta: float = DELTA) -> None:
        self.tree = tree
        self.delta = delta
        self.families: dict[tuple[bool, float], BoundFamily] = {}
        self._asked_tau: float | None = None
        tree.watch_changes()

    def family(self, clade: bool, tau: float = 1.0) -> BoundFamily:
        """The family's bounds, built on first use and brought up to date with the tree."""
        self.sync()
        family = self.families.get((clade, tau))
        if family is None:
            family = self.families[(clade, tau)] = BoundFamily(tau, clade)
            family.ensure_size(len(self.tree.parent))
            family.recompute(self.tree, np.arange(self.tree.n), self.delta)
        return family

    def wants_clade(self, tau: float) -> bool:
        """Whether to use bounds for this tau: yes once it is asked twice in a row (a tau that
        changes every call, as with cool-down, would rebuild every bound for one draw)."""
        if (True, tau) in self.families:
            return True
        again = self._asked_tau == tau
        self._asked_tau = tau
        return again

    def sync(self) -> None:
        """Recompute the bounds made stale by what the tree did since the last sync."""
        tree = self.tree
        changes = tree.drain_changes()
        if not changes or not self.families:
            return
        n = tree.n
        for family in self.families.values():
            family.ensure_size(len(tree.parent))
        if len(changes) > n // 8:  # many changes: one vectorized pass over every node
            everyone = np.arange(n)
            for family in self.families.values():
                family.recompute(tree, family.stale(tree, everyone), self.delta)
            return
        touched = np.unique(np.asarray(changes, dtype=np.int64))
        path = self._ancestors(touched) if any(key[0] for key in self.families) else touched
        for family in self.families.values():
            family.recompute(tree, family.stale(tree, path if family.clade else touched), self.delta)

    def _ancestors(self, nodes: np.ndarray) -> np.ndarray:
        """The nodes with all their ancestors, each once."""
        parent = self.tree.parent
        seen: set[int] = set()
        for node in nodes.tolist():
            while node >= 0 and node not in seen:
                seen.add(node)
                node = int(parent[node])
        return np.fromiter(seen, dtype=np.int64, count=len(seen))


def posterior_bounds(view: TreeView) -> PosteriorBounds:
    """The tree's bound cache (made on first use)."""
    return view.derived_cache(("posterior-bounds", DELTA), lambda tree: PosteriorBounds(tree, DELTA))


def _draw(
    cache: PosteriorBounds,
    family: BoundFamily,
    nodes: np.ndarray,
    s: np.ndarray,
    f: np.ndarray,
    tau: float,
    rng: np.random.Generator,
    stats: PruneStats | None,
) -> tuple[int, float]:
    m = len(nodes)
    if family.skip > 0:
        family.skip -= 1
        return thompson_argmax(1.0 + tau * s[nodes], 1.0 + tau * f[nodes], rng)

    def params(positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        chosen = nodes[positions]
        return 1.0 + tau * s[chosen], 1.0 + tau * f[chosen]

    stats = stats if stats is not None else PruneStats()
    upper = family.upper_of(nodes, cache.tree)
    result = pruned_argmax(m, upper, params, cache.delta, rng, target=family.target, stats=stats)
    # how many bounds the next draw sorts first: this draw's randomness steers later draws only
    family.target = max(MIN_TARGET, int(0.8 * family.target + 0.4 * stats.drawn))
    if stats.drawn > m // 2:  # bounds do not prune here: plain draws for a while
        family.skip, family.target = RETRY_AFTER, MIN_TARGET
    return result


def clade_thompson(
    view: TreeView, candidates: np.ndarray, tau: float, rng: np.random.Generator, stats: PruneStats | None = None
) -> tuple[int, float]:
    """Thompson argmax over the candidates' clade posteriors Beta(1 + tau S, 1 + tau F).

    Returns (position in candidates, theta), with the law of `thompson_argmax`
    on those parameters. Pruned when there are many candidates and tau is the
    same as last time.
    """
    candidates = np.asarray(candidates, dtype=np.int64)
    if len(candidates) >= MIN_PRUNED:
        cache = posterior_bounds(view)
        if cache.wants_clade(float(tau)):
            family = cache.family(True, float(tau))
            return _draw(cache, family, candidates, view.S, view.F, tau, rng, stats)
    return thompson_argmax(1.0 + tau * view.S[candidates], 1.0 + tau * view.F[candidates], rng)


def own_thompson(
    view: TreeView, nodes: np.ndarray, rng: np.random.Generator, stats: PruneStats | None = None, tau: float = 1.0
) -> tuple[int, float]:
    """Thompson argmax over the nodes' own posteriors Beta(1 + tau s, 1 + tau f): (position, theta)."""
    nodes = np.asarray(nodes, dtype=np.int64)
    if len(nodes) >= MIN_PRUNED:
        cache = posterior_bounds(view)
        return _draw(cache, cache.family(False, float(tau)), nodes, view.s, view.f, tau, rng, stats)
    return thompson_argmax(1.0 + tau * view.s[nodes], 1.0 + tau * view.f[nodes], rng)
