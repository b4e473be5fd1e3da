"""Incremental tree statistics: each node's own sums and its clade's sums.

An evaluation with score x adds x to the node's s and 1 - x to its f, and the
same to S and F of the node and every ancestor (its clade sums): O(depth) per
evaluation, never a recompute of the tree (docs/design.md, "The search"). Arrays grow by
doubling so that 100k nodes cost no Python objects per node beyond a bitmask.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar, cast, overload

import numpy as np

_FLOAT_FIELDS = ("s", "f", "S", "F", "feature")
_INT_FIELDS = ("parent", "depth", "n_evals", "n_clade_evals", "n_children", "n_valid_children", "n_in_flight")


Cache = TypeVar("Cache")  # what a derived cache holds (posterior bounds, island state, ...)


class OwnMeans:
    """A node's own mean dev score, for what holds the tree's own sums: `TreeStats` and its `TreeView`."""

    n: int  # nodes; the arrays may be longer (TreeStats grows them ahead)
    s: np.ndarray
    n_evals: np.ndarray

    @overload
    def mean(self, nodes: int | np.integer) -> float: ...
    @overload
    def mean(self, nodes: np.ndarray | None = None) -> np.ndarray: ...
    def mean(self, nodes: int | np.integer | np.ndarray | None = None) -> float | np.ndarray:
        """s / n_evals (0 without evaluations) of a node (a float), of nodes (an array), or of every node (no
        argument). Vectorised: one division over the nodes asked for, no Python loop."""
        if isinstance(nodes, int | np.integer):
            n = int(self.n_evals[nodes])
            return float(self.s[nodes]) / n if n else 0.0
        if nodes is None:
            sums, counts = self.s[: self.n], self.n_evals[: self.n]
        else:
            sums, counts = self.s[nodes], self.n_evals[nodes]
        return np.divide(sums, counts, out=np.zeros(counts.shape), where=counts > 0)


class TreeStats(OwnMeans):
    """The tree's numbers, owned by the engine; policies see a `TreeView`."""

    # per node, in arrays of `_capacity` that `_grow` makes (the first `n` are nodes)
    s: np.ndarray
    f: np.ndarray
    S: np.ndarray
    F: np.ndarray
    feature: np.ndarray
    parent: np.ndarray
    depth: np.ndarray
    n_evals: np.ndarray
    n_clade_evals: np.ndarray
    n_children: np.ndarray
    n_valid_children: np.ndarray
    n_in_flight: np.ndarray
    valid: np.ndarray
    open_mask: np.ndarray

    def __init__(self, n_instances: int, capacity: int = 1024) -> None:
        if n_instances < 0:
            raise ValueError("n_instances must be >= 0")
        self.n_instances = n_instances
        self.n = 0
        self.n_valid = 0
        self.evaluations_done = 0
        self.in_flight = 0
        self._full_mask = (1 << n_instances) - 1
        self._capacity = 0
        self.tried: list[int] = []  # bitmask of dev instances done or in flight, per node
        self.derived: dict[object, object] = {}  # caches derived from these numbers (search.bounds), not state
        self._changes: dict[object, list[int]] = {}  # per watcher: nodes added or evaluated since its last drain
        self._open_nodes: np.ndarray | None = None  # flatnonzero(open_mask[:n]), kept until the open set changes
        self._frozen: dict[str, np.ndarray] = {}  # the read-only arrays of the last view, kept while n is the same
        self._grow(max(capacity, 1))

    def _grow(self, capacity: int) -> None:
        for name in _FLOAT_FIELDS:
            old = getattr(self, name, np.zeros(0))
            new = np.zeros(capacity, dtype=np.float64)
            new[: len(old)] = old
            setattr(self, name, new)
        for name in _INT_FIELDS:
            old = getattr(self, name, np.zeros(0, dtype=np.int64))
            new = np.zeros(capacity, dtype=np.int64)
            new[: len(old)] = old
            setattr(self, name, new)
        for name in ("valid", "open_mask"):  # open: valid, with an instance neither done nor in flight
            old = getattr(self, name, np.zeros(0, dtype=bool))
            new = np.zeros(capacity, dtype=bool)
            new[: len(old)] = old
            setattr(self, name, new)
        self._capacity = capacity
        self._frozen = {}

    @property
    def open_nodes(self) -> set[int]:
        return set(self.open_node_ids().tolist())

    def open_node_ids(self) -> np.ndarray:
        """Valid nodes with a dev instance neither done nor in flight, in id order (read-only).

        Kept from one call to the next until a node opens or closes: at 100k nodes most decisions change
        no node's openness (a node closes only when its last instance starts), so the O(n) pass that finds
        them runs once per change instead of once per decision. Code that writes `open_mask` directly
        (the benchmarks' synthetic trees) must call `open_changed` afterwards."""
        nodes = self._open_nodes
        if nodes is None:
            nodes = np.flatnonzero(self.open_mask[: self.n])
            nodes.flags.writeable = False
            self._open_nodes = nodes
        return nodes

    def open_changed(self) -> None:
        """Forget the open nodes kept by `open_node_ids` (open_mask was written)."""
        self._open_nodes = None

    # ----- growth ------------------------------------------------------------
    def add_node(self, parent: int | None, valid: bool, feature: float = 0.0) -> int:
        """A new node (ids in creation order). `feature`: a number describing the agent for policies that
        keep a diversity grid (OpenEvolve's MAP-Elites), e.g. its code size in bytes; 0 when not given."""
        node = self.n
        if node >= self._capacity:
            self._grow(2 * self._capacity)
        self.parent[node] = -1 if parent is None else parent
        self.depth[node] = 0 if parent is None else self.depth[parent] + 1
        self.valid[node] = valid
        self.feature[node] = feature
        self.tried.append(0)
        if parent is not None:
            self.n_children[parent] += 1
            if valid:
                self.n_valid_children[parent] += 1
        if valid:
            self.n_valid += 1
            self.open_mask[node] = self.n_instances > 0
        self.n += 1
        self._open_nodes = None  # n grew: a new open node, and the kept ids cover the old n
        self._frozen = {}
        for log in self._changes.values():
            log.append(node)
        return node

    # ----- evaluations -------------------------------------------------------
    def is_tried(self, node: int, instance: int) -> bool:
        return bool(self.tried[node] >> instance & 1)

    def start_evaluation(self, node: int, instance: int) -> None:
        """Mark (node, instance) as in flight so no one else picks it."""
        if self.is_tried(node, instance):
            raise ValueError(f"instance {instance} of node {node} is already done or in flight")
        self.tried[node] |= 1 << instance
        self.in_flight += 1
        self.n_in_flight[node] += 1
        if self.tried[node] == self._full_mask:
            self.open_mask[node] = False
            self._open_nodes = None

    def abandon_evaluation(self, node: int, instance: int) -> None:
        """An in-flight evaluation that will not finish (lost, cancelled): free the instance again."""
        self.tried[node] &= ~(1 << instance)
        self.in_flight -= 1
        self.n_in_flight[node] -= 1
        if self.valid[node] and not self.open_mask[node]:
            self.open_mask[node] = True
            self._open_nodes = None

    def finish_evaluation(self, node: int, instance: int, score: float, started: bool = True) -> None:
        """Add a finished dev evaluation to the node and every ancestor."""
        if not started:
            self.start_evaluation(node, instance)
        self.in_flight -= 1
        self.n_in_flight[node] -= 1
        x = min(max(float(score), 0.0), 1.0)
        self.s[node] += x
        self.f[node] += 1.0 - x
        self.n_evals[node] += 1
        self.evaluations_done += 1
        current = node
        while current >= 0:
            self.S[current] += x
            self.F[current] += 1.0 - x
            self.n_clade_evals[current] += 1
            current = int(self.parent[current])
        for log in self._changes.values():
            log.append(node)

    # ----- derived caches ---------------------------------------------------
    def watch_changes(self, watcher: object = None) -> None:
        """From now on, log every added or evaluated node for this watcher (an evaluation changes its
        ancestors' S, F too). Each watcher (a derived cache) has its own log, drained by it alone."""
        self._changes.setdefault(watcher, [])

    def drain_changes(self, watcher: object = None) -> list[int]:
        """Nodes added or evaluated since this watcher's last drain (with repeats), and forget them."""
        changes = self._changes.get(watcher)
        if changes is None:
            return []
        self._changes[watcher] = []
        return changes

    def derived_cache(self, key: object, make: Callable[[TreeStats], Cache]) -> Cache:
        """The cache stored under `key`, made by `make(self)` the first time (e.g. posterior bounds); a key is
        always made by the same `make`, so what is stored under it is what `make` returns."""
        cache = self.derived.get(key)
        if cache is None:
            cache = self.derived[key] = make(self)
        return cast(Cache, cache)

    # ----- reading ---------------------------------------------------------
    def untried(self, node: int) -> list[int]:
        mask = self.tried[node]
        return [i for i in range(self.n_instances) if not mask >> i & 1]

    def view(
        self, pending_expansions: int = 0, budget: int | None = None, can_expand: bool = True, evidence: float = 1.0
    ) -> TreeView:
        if not self._frozen:  # read-only views of the first n entries, made again only when n or the arrays change
            for name in (*_FLOAT_FIELDS, *_INT_FIELDS, "valid", "open_mask"):
                v = getattr(self, name)[: self.n].view()
                v.flags.writeable = False
                self._frozen[name] = v
        frozen = self._frozen.__getitem__
        return TreeView(
            n=self.n,
            n_valid=self.n_valid,
            n_instances=self.n_instances,
            evaluations_done=self.evaluations_done,
            in_flight=self.in_flight,
            pending_expansions=pending_expansions,
            budget=budget,
            can_expand=can_expand,
            parent=frozen("parent"),
            depth=frozen("depth"),
            valid=frozen("valid"),
            s=frozen("s"),
            f=frozen("f"),
            S=frozen("S"),
            F=frozen("F"),
            n_evals=frozen("n_evals"),
            n_clade_evals=frozen("n_clade_evals"),
            n_children=frozen("n_children"),
            n_valid_children=frozen("n_valid_children"),
            open_mask=frozen("open_mask"),
            n_in_flight=frozen("n_in_flight"),
            feature=frozen("feature"),
            _tree=self,
            evidence=evidence,
        )


@dataclass(frozen=True)
class TreeView(OwnMeans):
    """A read-only picture of the tree handed to a policy. Arrays are not writeable."""

    n: int
    n_valid: int
    n_instances: int
    evaluations_done: int
    in_flight: int
    pending_expansions: int
    budget: int | None
    can_expand: bool  # False while every expansion slot (e.g. LLM calls in flight) is taken
    parent: np.ndarray
    depth: np.ndarray
    valid: np.ndarray
    s: np.ndarray
    f: np.ndarray
    S: np.ndarray
    F: np.ndarray
    n_evals: np.ndarray
    n_clade_evals: np.ndarray
    n_children: np.ndarray
    n_valid_children: np.ndarray
    open_mask: np.ndarray
    n_in_flight: np.ndarray  # evaluations started and not finished, per node
    feature: np.ndarray  # a number describing each agent (e.g. code size), see TreeStats.add_node
    _tree: TreeStats
    stage_key: tuple = ()  # set by a wrapper that masks open_mask (search.cascade), for caches that depend on it
    evidence: float = 1.0  # Bernoulli trials one evaluation is worth (search.evidence); 1 = HGM as published

    @property
    def open_nodes(self) -> np.ndarray:
        """Valid nodes with a dev instance neither done nor in flight, in id order: the tree's kept array
        (`TreeStats.open_node_ids`) when this view's open_mask is the tree's own, else one pass over it."""
        tree = self._tree
        if self.n == tree.n and self.open_mask.base is tree.open_mask:
            return tree.open_node_ids()
        return np.flatnonzero(self.open_mask)

    def untried(self, node: int) -> list[int]:
        """Dev instance indices this node has neither finished nor has in flight."""
        return self._tree.untried(node)

    def derived_cache(self, key: object, make: Callable[[TreeStats], Cache]) -> Cache:
        """A cache derived from the tree's numbers, kept with the tree across views (TreeStats.derived_cache)."""
        return self._tree.derived_cache(key, make)


def recompute_clade_sums(parent: np.ndarray, s: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Brute-force clade sums (for tests and the benchmark's naive side): every node's subtree, summed.

    Children always have larger ids than their parents, so one reverse pass suffices.
    """
    S = np.array(s, dtype=np.float64, copy=True)
    F = np.array(f, dtype=np.float64, copy=True)
    for node in range(len(parent) - 1, 0, -1):
        p = parent[node]
        if p >= 0:
            S[p] += S[node]
            F[p] += F[node]
    return S, F
