"""Per-node upper bounds on the HGM posteriors, kept in step with the tree, for pruned Thompson draws.

For each node and each family of posteriors (its own Beta(1 + s, 1 + f), its
clade's Beta(1 + tau S, 1 + tau F) for a fixed tau) we keep u_i with
P(theta_i > u_i) <= delta (`search.thompson.pruned_argmax` needs no more).
A bound is computed with room for k_i more evaluations, k_i = floor(c sqrt(N_i)),
N_i the count behind the posterior: u_i is the upper delta-quantile of
Beta(1 + tau (S_i + k_i), 1 + tau F_i). An evaluation adds x <= 1 to S and
1 - x >= 0 to F; the Beta law is stochastically increasing in its first
parameter and decreasing in its second, so u_i stays a valid bound until the
node has seen more than k_i further evaluations, and only then is recomputed.
An evaluation touches one node's own posterior and its ancestors' clade
posteriors, so keeping the bounds costs O(depth) cheap checks per evaluation
and about sum_path 1 / (k + 1) quantile computations; a full build (the first
pruned draw on a big tree, or a new tau) is one vectorized pass over all nodes.

Each family also keeps a `key` per node (its posterior mean when last
computed) to choose the lead of a pruned draw: any rule fixed before the draw
keeps the draw exact, a good one only makes it cheaper.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from search.thompson import PruneStats, beta_upper_bound, pruned_argmax, thompson_argmax
from search.tree import TreeStats, TreeView

DELTA = 1e-4  # tail mass above each bound; about DELTA * m pruned candidates are picked per draw
SLACK = 0.5  # room for k = floor(SLACK * sqrt(N)) further evaluations before a bound is recomputed
MIN_PRUNED = 4096  # below this many candidates the plain vectorized draw is as fast
RETRY_AFTER = 32  # after a draw fell back (bounds did not prune), this many plain draws before trying again


@dataclass
class BoundFamily:
    """Bounds u, lead keys and validity limits for one family of posteriors, indexed by node id."""

    tau: float
    clade: bool  # clade sums (S, F, n_clade_evals) or own sums (s, f, n_evals)
    upper: np.ndarray = field(default_factory=lambda: np.zeros(0))
    key: np.ndarray = field(default_factory=lambda: np.zeros(0))
    limit: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # valid while N <= limit
    skip: int = 0  # plain draws left before the pruned path is tried again
    recomputed: int = 0  # bounds computed since creation (for the benchmark)

    def arrays(self, tree: TreeStats) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self.clade:
            return tree.S, tree.F, tree.n_clade_evals
        return tree.s, tree.f, tree.n_evals

    def ensure_size(self, size: int) -> None:
        if len(self.upper) >= size:
            return
        grown = max(size, 2 * len(self.upper), 1024)
        for name, fill in (("upper", 1.0), ("key", 0.0)):
            new = np.full(grown, fill)
            new[: len(getattr(self, name))] = getattr(self, name)
            setattr(self, name, new)
        limit = np.full(grown, -1, dtype=np.int64)  # -1: never computed
        limit[: len(self.limit)] = self.limit
        self.limit = limit

    def recompute(self, tree: TreeStats, nodes: np.ndarray, delta: float) -> None:
        if len(nodes) == 0:
            return
        s, f, counts = self.arrays(tree)
        n_now = counts[nodes]
        room = np.floor(SLACK * np.sqrt(n_now))
        a, b = 1.0 + self.tau * s[nodes], 1.0 + self.tau * f[nodes]
        self.upper[nodes] = beta_upper_bound(a + self.tau * room, b, delta)
        self.key[nodes] = a / (a + b)
        self.limit[nodes] = n_now + room.astype(np.int64)
        self.recomputed += len(nodes)

    def stale(self, tree: TreeStats, nodes: np.ndarray) -> np.ndarray:
        counts = self.arrays(tree)[2]
        return nodes[counts[nodes] > self.limit[nodes]]


class PosteriorBounds:
    """Bounds for the own family and for each clade tau in use; lives in `TreeStats.derived`."""

    def __init__(self, tree: TreeStats, delta: float = DELTA) -> None:
        self.tree = tree
        self.delta = delta
        self.own = BoundFamily(1.0, clade=False)
        self.clades: dict[float, BoundFamily] = {}
        self._asked_tau: float | None = None
        self._synced = 0  # nodes [0, _synced) are known to every family
        tree.watch_changes()
        self._families_to_build: list[BoundFamily] = [self.own]

    # ----- keeping up with the tree ------------------------------------------
    def sync(self) -> None:
        """Recompute the bounds that the evaluations since the last sync made stale."""
        tree = self.tree
        changes = tree.drain_changes()
        n = tree.n
        families = [self.own, *self.clades.values()]
        for family in families:
            family.ensure_size(len(tree.parent))
        for family in self._families_to_build:
            family.recompute(tree, np.arange(n), self.delta)
        self._families_to_build = []
        if not changes and self._synced == n:
            return
        self._synced = n
        if len(changes) > n // 8:  # many changes: one vectorized pass over every node
            everyone = np.arange(n)
            for family in families:
                family.recompute(tree, family.stale(tree, everyone), self.delta)
            return
        touched = np.unique(np.asarray(changes, dtype=np.int64))
        self.own.recompute(tree, self.own.stale(tree, touched), self.delta)
        if self.clades:
            path = self._ancestors(touched)
            for family in self.clades.values():
                family.recompute(tree, family.stale(tree, path), self.delta)

    def _ancestors(self, nodes: np.ndarray) -> np.ndarray:
        """The nodes with all their ancestors, each once."""
        parent = self.tree.parent
        seen: set[int] = set()
        for node in nodes.tolist():
            while node >= 0 and node not in seen:
                seen.add(node)
                node = int(parent[node])
        return np.fromiter(seen, dtype=np.int64, count=len(seen))

    def clade_family(self, tau: float) -> BoundFamily | None:
        """The bounds for Beta(1 + tau S, 1 + tau F); None the first time a new tau is asked
        (a tau that changes every call, as with cool-down, would rebuild for nothing)."""
        family = self.clades.get(tau)
        if family is None:
            if self._asked_tau != tau:
                self._asked_tau = tau
                return None
            family = self.clades[tau] = BoundFamily(tau, clade=True)
            family.ensure_size(len(self.tree.parent))
            self._families_to_build.append(family)
        return family


def _bounds(view: TreeView) -> PosteriorBounds:
    return view.derived_cache(("posterior-bounds", DELTA), PosteriorBounds)  # type: ignore[return-value]


def _draw(family: BoundFamily, cache: PosteriorBounds, nodes: np.ndarray, s: np.ndarray, f: np.ndarray,
          tau: float, rng: np.random.Generator, stats: PruneStats | None) -> tuple[int, float]:
    if family.skip > 0:
        family.skip -= 1
        return thompson_argmax(1.0 + tau * s[nodes], 1.0 + tau * f[nodes], rng)
    upper = family.upper[nodes]
    lead = int(np.argmax(family.key[nodes]))

    def params(positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        chosen = nodes[positions]
        return 1.0 + tau * s[chosen], 1.0 + tau * f[chosen]

    stats = stats if stats is not None else PruneStats()
    result = pruned_argmax(len(nodes), upper, lead, params, cache.delta, rng, stats=stats)
    if stats.fell_back:
        family.skip = RETRY_AFTER  # decided by this draw's randomness, used only by later draws
    return result


def clade_thompson(view: TreeView, candidates: np.ndarray, tau: float, rng: np.random.Generator,
                   stats: PruneStats | None = None) -> tuple[int, float]:
    """Thompson argmax over candidates' clade posteriors Beta(1 + tau S, 1 + tau F): (position, theta).

    Same distribution as `thompson_argmax` on those parameters; pruned when the
    tree is big enough for that to pay (tau must stay fixed from call to call for that).
    """
    candidates = np.asarray(candidates, dtype=np.int64)
    if len(candidates) < MIN_PRUNED:
        return thompson_argmax(1.0 + tau * view.S[candidates], 1.0 + tau * view.F[candidates], rng)
    cache = _bounds(view)
    family = cache.clade_family(float(tau))
    if family is None:
        return thompson_argmax(1.0 + tau * view.S[candidates], 1.0 + tau * view.F[candidates], rng)
    cache.sync()
    return _draw(family, cache, candidates, view.S, view.F, tau, rng, stats)


def own_thompson(view: TreeView, nodes: np.ndarray, rng: np.random.Generator,
                 stats: PruneStats | None = None) -> tuple[int, float]:
    """Thompson argmax over nodes' own posteriors Beta(1 + s, 1 + f): (position, theta), exact."""
    nodes = np.asarray(nodes, dtype=np.int64)
    if len(nodes) < MIN_PRUNED:
        return thompson_argmax(1.0 + view.s[nodes], 1.0 + view.f[nodes], rng)
    cache = _bounds(view)
    cache.sync()
    return _draw(cache.own, cache, nodes, view.s, view.f, 1.0, rng, stats)
