"""Time per decision of the HGM scheduler (select + archive write) on synthetic trees, beside a naive recompute.

    python scripts/bench_scheduler.py            # 1k, 10k, 100k nodes, every shape (a few minutes)
    python scripts/bench_scheduler.py --quick    # 1k and 10k nodes, fewer decisions

Synthetic trees (`grow`): node ids in creation order, every node has a hidden
quality q in [0.02, 0.98]; a child's q is its parent's plus N(-0.01, 0.06)
(hgm) or N(0, 0.10) (the others); 15% of children are invalid (stored, never
evaluated, never a candidate). An evaluation scores clip(q + N(0, 0.2), 0, 1)
(fractional), or 0 for the 5% that fail. 16 dev instances.
- `hgm`: what HGMPolicy itself produces with 16 dev instances. Widening
  (t^0.6 >= nodes, t <= 16 nodes) stops at 64 nodes; after that the policy
  expands only when no node has an instance left to run, so every valid node
  has all 16 evaluations except the newest few (4 here, as with 4 workers).
  Parents by tournament: the best of 3 earlier evaluated nodes (HGM prefers
  good clades, so lines run deep).
- `mixed`: parents uniformly at random (a random recursive tree, depth ~ ln n),
  1 to 16 evaluations per valid node, uniformly.
- `wide`: parents uniformly at random, 1 to 3 evaluations per valid node: the
  hard case for pruning (flat posteriors, every node open).

Engine side, per decision, as engine/scheduler.py does it: `HGMPolicy().decide(
tree.view(), rng)` (select; it includes keeping the bounds of search.bounds in
step with the last evaluations), then for an evaluation `tree.start_evaluation`
+ `tree.finish_evaluation` (update) and one `Archive.add_evaluation(record,
event=...)` committed to a DuckDB file in a temporary directory (write); the
archive is first filled with as many evaluation and event rows as the tree
holds. An expansion adds a node to the tree (its `add_node` write, with the
mutator's work, is not a per-decision cost and is timed apart). "expand
select" forces an expansion decision (a view with pending_expansions = -n, so
widening holds) before each real decision: the clade Thompson draw over every
evaluated node, the draw that grows with the tree.
Naive side, what HGM's public code does per decision: pool every node's
subtree again (`get_decendant_evals`: a walk of each node's subtree, O(n depth)),
then one Thompson draw over every candidate; also shown: one O(n) reverse pass
(`search.tree.recompute_clade_sums`) + the draw. At 100k nodes these take
seconds, so only a few naive decisions are timed.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from archive.records import EvaluationRecord, NodeRecord  # noqa: E402
from archive.store import Archive, utcnow  # noqa: E402
from search import HGMPolicy  # noqa: E402
from search.decisions import Evaluate, Expand, evaluable  # noqa: E402
from search.thompson import thompson_argmax  # noqa: E402
from search.tree import TreeStats, recompute_clade_sums  # noqa: E402

N_INSTANCES = 16
INVALID = 0.15
FAIL = 0.05
NOISE = 0.2
SHAPES = ("hgm", "mixed", "wide")


# ----- synthetic trees -----------------------------------------------------------
@dataclass
class Synthetic:
    shape: str
    tree: TreeStats
    quality: list[float]
    children: list[list[int]]

    def describe(self) -> str:
        n, tree = self.tree.n, self.tree
        depth = tree.depth[:n]
        evals = tree.n_evals[:n][tree.valid[:n]]
        return (f"{self.shape}: {n} nodes ({tree.n_valid} valid), depth mean {depth.mean():.1f} max {depth.max()}, "
                f"own evaluations per valid node mean {evals.mean():.1f} (min {evals.min()}, max {evals.max()}), "
                f"{tree.evaluations_done} evaluations, {len(tree.open_nodes)} open nodes")


def child_quality(q: float, shape: str, rng: np.random.Generator) -> float:
    step = rng.normal(-0.01, 0.06) if shape == "hgm" else rng.normal(0.0, 0.10)
    return float(min(max(q + step, 0.02), 0.98))


def score(q: float, rng: np.random.Generator) -> float:
    if rng.random() < FAIL:
        return 0.0
    return float(min(max(q + rng.normal(0.0, NOISE), 0.0), 1.0))


def grow(n: int, shape: str, seed: int) -> Synthetic:
    """A tree of n nodes of the given shape (see the module docstring), its numbers filled in directly."""
    rng = np.random.default_rng(seed)
    parent = [-1]
    quality = [0.4]
    valid = [True]
    usable = [0]  # valid nodes, the possible parents
    picks = rng.integers(0, 2**62, size=(n, 3))
    for node in range(1, n):
        if shape == "hgm":
            trio = [usable[int(x) % len(usable)] for x in picks[node]]
            p = max(trio, key=lambda i: quality[i])
        else:
            p = usable[int(picks[node, 0]) % len(usable)]
        parent.append(p)
        quality.append(child_quality(quality[p], shape, rng))
        ok = bool(rng.random() >= INVALID)
        valid.append(ok)
        if ok:
            usable.append(node)
    valid_arr = np.array(valid)
    if shape == "hgm":
        k = np.where(valid_arr, N_INSTANCES, 0)
        newest = np.flatnonzero(valid_arr)[-4:]
        k[newest[1:]] = rng.integers(0, N_INSTANCES, size=len(newest) - 1)  # in flight when the snapshot is taken
    elif shape == "mixed":
        k = np.where(valid_arr, rng.integers(1, N_INSTANCES + 1, size=n), 0)
    else:
        k = np.where(valid_arr, rng.integers(1, 4, size=n), 0)
    owner = np.repeat(np.arange(n), k)
    x = np.clip(np.asarray(quality)[owner] + rng.normal(0.0, NOISE, size=len(owner)), 0.0, 1.0)
    x[rng.random(len(owner)) < FAIL] = 0.0
    s = np.bincount(owner, weights=x, minlength=n)
    f = k - s
    tree = TreeStats(N_INSTANCES, capacity=n + 4096)
    children: list[list[int]] = [[] for _ in range(n)]
    for node in range(n):
        tree.add_node(None if node == 0 else parent[node], valid[node])
        if node:
            children[parent[node]].append(node)
    # the evaluations, filled in directly (one finish_evaluation per evaluation would take minutes)
    tree.s[:n], tree.f[:n], tree.n_evals[:n] = s, f, k
    S, F = recompute_clade_sums(tree.parent[:n], s, f)
    tree.S[:n], tree.F[:n] = S, F
    counts = k.astype(np.int64).copy()
    for node in range(n - 1, 0, -1):
        counts[parent[node]] += counts[node]
    tree.n_clade_evals[:n] = counts
    tree.tried = [(1 << int(c)) - 1 for c in k]
    tree.evaluations_done = int(k.sum())
    tree.open_nodes = {i for i in range(n) if valid[i] and k[i] < N_INSTANCES}
    return Synthetic(shape, tree, quality, children)
