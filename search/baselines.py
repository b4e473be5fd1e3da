"""Baseline policies that every comparison needs.

- `greedy`: the AutoResearch / SICA loop (Robeyns et al. 2025, "A Self-Improving
  Coding Agent"): evaluate each child on every dev instance, then always expand
  the best node so far; a worse child is simply never expanded (keep if better).
- `random`: expand a uniformly random evaluated node once every child has been
  fully evaluated; evaluate in random order. The floor any policy must beat.
- `best_of_n`: every child is a child of the root, each evaluated on every dev
  instance (the shared loop of search.generational); the final node is the
  best mean among the fully evaluated ones. Sampling n independent variants of
  the seed and keeping the best: the honest baseline every comparison needs
  (docs/design.md), since a tree search that does not beat it gains nothing from
  its tree (ShinkaEvolve ships the same strategy, `BestOfNSamplingStrategy`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from search.decisions import (
    Decision,
    Evaluate,
    Expand,
    FinalChoice,
    evaluable,
    pick_instance,
)
from search.final import max_mean, max_mean_k
from search.generational import generational_decide, is_settled
from search.tree import TreeView


@dataclass(frozen=True)
class GreedyPolicy:
    name: str = "greedy"

    def decide(self, view: TreeView, rng: np.random.Generator) -> Decision | None:
        open_nodes = view.open_nodes
        if len(open_nodes):
            node = int(open_nodes[0])  # finish the oldest child first
            return Evaluate(node, pick_instance(view, node, rng), {"rule": "finish child"})
        if view.in_flight or view.pending_expansions or not view.can_expand:
            return None  # wait: the best node is not known until the child's results are in
        choice = max_mean(view, view.n_instances)
        if choice is None:
            return None
        return Expand(choice.node_id, {"rule": "best so far", **choice.detail})

    def select_final(self, view: TreeView, rng: np.random.Generator) -> FinalChoice | None:
        return max_mean(view, view.n_instances)


@dataclass(frozen=True)
class RandomPolicy:
    name: str = "random"

    def decide(self, view: TreeView, rng: np.random.Generator) -> Decision | None:
        open_nodes = view.open_nodes
        if len(open_nodes):
            node = int(open_nodes[int(rng.integers(len(open_nodes)))])
            return Evaluate(node, pick_instance(view, node, rng), {"rule": "random open node"})
        candidates = evaluable(view)
        if len(candidates) == 0 or not view.can_expand:
            return None
        node = int(candidates[int(rng.integers(len(candidates)))])
        return Expand(node, {"rule": "random evaluated node", "candidates": len(candidates)})

    def select_final(self, view: TreeView, rng: np.random.Generator) -> FinalChoice | None:
        return max_mean(view, view.n_instances)


@dataclass(frozen=True)
class BestOfNPolicy:
    name: str = "best_of_n"

    def parent(self, view: TreeView, rng: np.random.Generator) -> tuple[int, dict] | None:
        if view.n == 0 or not is_settled(view, 0):
            return None
        return 0, {"rule": "best of n: every child from the root", "children": int(view.n_children[0])}

    def decide(self, view: TreeView, rng: np.random.Generator) -> Decision | None:
        return generational_decide(view, rng, self.parent)

    def select_final(self, view: TreeView, rng: np.random.Generator) -> FinalChoice | None:
        return max_mean_k(view)
