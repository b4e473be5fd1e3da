"""What the archive-style policies (DGM, ShinkaEvolve, OpenEvolve, ADAS, best-of-n, UCT) share.

Their sources are generational: a child is evaluated before it can be a
parent. Here that reads: a node is a *candidate parent* once it is settled,
i.e. valid, evaluated at least once, with nothing left open and nothing in
flight (all its dev instances done, or, under staged evaluation, its stage
done and no more granted). The loop of every such policy:
1. an open node (a child not yet fully evaluated) is evaluated first, the
   oldest first, on an instance it has not run, at random;
2. otherwise, when an expansion slot is free, the policy's parent rule picks
   a candidate and expands it;
3. otherwise nothing (the scheduler waits for a result).
The scheduler asks for a decision only when a worker is free, so step 2
happens while other evaluations run: workers stay busy, and the parent is
drawn from the archive as it is (DGM and ShinkaEvolve draw a generation's
parents from the archive before that generation's children are scored).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from search.decisions import Decision, Evaluate, Expand, pick_instance
from search.tree import TreeView

ParentRule = Callable[[TreeView, np.random.Generator], "tuple[int, dict] | None"]


def settled_mask(view: TreeView) -> np.ndarray:
    """Candidate parents: valid, evaluated, nothing open, nothing in flight (boolean over every node)."""
    return view.valid & (view.n_evals > 0) & ~view.open_mask & (view.n_in_flight == 0)


def drawable_mask(view: TreeView) -> np.ndarray:
    """Candidate parents of an asynchronous draw (dgm, openevolve): valid, evaluated, nothing open; a node whose
    last dev instances are still in flight counts with the evaluations that came back instead of waiting for
    them. Kandasamy et al., "Parallelised Bayesian Optimisation via Thompson Sampling" (AISTATS 2018): an
    asynchronous worker draws from what is known when it frees, conditioned on the finished evaluations only,
    and loses little to the sequential draw. Waiting for every pending evaluation makes a lineage deepen once
    per slowest-of-its-instances: with 64 workers and 800 evaluations, a search lasts about a dozen evaluation
    times (scripts/bench_workers.py: dgm's deepest node at depth 5 instead of 11). With one worker nothing is
    in flight when the policy decides, so this is `settled_mask` there."""
    return view.valid & (view.n_evals > 0) & ~view.open_mask


def settled_among(view: TreeView, nodes: np.ndarray) -> np.ndarray:
    """`settled_mask` for the given nodes only (boolean, aligned with nodes)."""
    return view.valid[nodes] & (view.n_evals[nodes] > 0) & ~view.open_mask[nodes] & (view.n_in_flight[nodes] == 0)


def is_settled(view: TreeView, node: int) -> bool:
    """`settled_mask` for one node."""
    return bool(
        view.valid[node] and view.n_evals[node] > 0 and not view.open_mask[node] and view.n_in_flight[node] == 0
    )


def settled(view: TreeView) -> np.ndarray:
    """Candidate parents' ids, in id order."""
    return np.flatnonzero(settled_mask(view))


def oldest_open(view: TreeView) -> int | None:
    """The open node with the smallest id, if any (O(n) vectorized, no list built)."""
    if view.n == 0:
        return None
    node = int(np.argmax(view.open_mask))
    return node if view.open_mask[node] else None


def sample_index(weights: np.ndarray, rng: np.random.Generator) -> int:
    """An index drawn with probability proportional to `weights` (uniform when they sum to zero):
    one uniform number, inverted through the cumulative sum."""
    cumulative = np.cumsum(weights, dtype=np.float64)
    total = float(cumulative[-1])
    if not total > 0.0:
        return int(rng.integers(len(weights)))
    k = int(np.searchsorted(cumulative, rng.random() * total, side="right"))
    return min(k, len(weights) - 1)


def top_k(nodes: np.ndarray, values: np.ndarray, k: int) -> np.ndarray:
    """The k nodes with the highest values, ties to the smaller id, in id order (O(m), no full sort)."""
    if k >= len(nodes):
        return nodes
    if k <= 0:
        return nodes[:0]
    cut = np.partition(values, len(values) - k)[len(values) - k]  # the k-th highest value
    above = values > cut
    need = k - int(above.sum())
    at = np.flatnonzero(values == cut)[:need]  # nodes are in id order, so these are the oldest ties
    keep = above
    keep[at] = True
    return nodes[keep]


def ranked(nodes: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The nodes by decreasing value, ties to the smaller id (a stable sort of the negated values)."""
    return nodes[np.argsort(-values, kind="stable")]


def generational_decide(view: TreeView, rng: np.random.Generator, parent_rule: ParentRule) -> Decision | None:
    """The shared loop (module docstring): evaluate the oldest open node, else expand the rule's parent."""
    node = oldest_open(view)
    if node is not None:
        return Evaluate(node, pick_instance(view, node, rng), {"rule": "evaluate child before it can be a parent"})
    if not view.can_expand:
        return None
    choice = parent_rule(view, rng)
    if choice is None:
        return None
    parent, detail = choice
    return Expand(parent, detail)
