"""HGM's decision, made cheaper, decides the same: the expansion candidates (an O(n) pass) are built only when
an expansion may follow, and the sequence of decisions on growing trees equals the one of the eager order
(candidates first, as before), decision for decision, theta for theta."""

from __future__ import annotations

import numpy as np
import pytest

from search import HGMPolicy
from search.decisions import Evaluate, evaluable
from search.tree import TreeStats


def eager_decide(policy: HGMPolicy, view, rng):
    """HGMPolicy.decide as it was: the candidates first, on every decision."""
    t = view.evaluations_done
    grown = (view.n_valid - 1) + view.pending_expansions
    widen = t**policy.alpha >= grown
    candidates = evaluable(view)
    can_evaluate = bool(view.open_mask.any())
    if len(candidates) and view.can_expand and (widen or not can_evaluate):
        return policy._expand(view, candidates, rng, t, grown, widen)
    if can_evaluate:
        return policy._evaluate(view, rng, t, grown)
    return None


def sequence(decide, start_nodes: int, steps: int, seed: int) -> list[tuple]:
    """Decisions on a tree of `start_nodes` (each valid node 1-8 of 8 instances done) grown by them."""
    world = np.random.default_rng(seed)
    tree = TreeStats(8, capacity=start_nodes + steps + 8)
    quality = [0.5]
    tree.add_node(None, True)
    for node in range(1, start_nodes):
        parent = int(world.integers(node))
        tree.add_node(parent, bool(tree.valid[parent] and world.random() > 0.2))
        quality.append(float(np.clip(quality[parent] + world.normal(0, 0.1), 0, 1)))
    for node in range(start_nodes):
        if tree.valid[node]:
            for instance in range(int(world.integers(1, 9))):
                tree.finish_evaluation(node, instance, float(world.random() < quality[node]), started=False)
    policy, rng, out, flying = HGMPolicy(), np.random.default_rng(seed + 1), [], []
    for _ in range(steps):
        decision = decide(policy, tree.view(budget=10**6, can_expand=len(flying) % 3 != 0), rng)
        if decision is None:
            break
        if isinstance(decision, Evaluate):
            tree.start_evaluation(decision.node_id, decision.instance)
            flying.append((decision.node_id, decision.instance))
        else:
            parent = decision.node_id
            tree.add_node(parent, bool(world.random() > 0.2))
            quality.append(quality[parent])
        out.append((type(decision).__name__, decision.node_id, getattr(decision, "instance", None), decision.detail))
        if len(flying) >= 4:
            node, instance = flying.pop(int(world.integers(len(flying))))
            tree.finish_evaluation(node, instance, float(world.random() < quality[node]))
    return out


@pytest.mark.parametrize(("start_nodes", "seed"), [(1, 0), (1, 1), (40, 2), (7000, 3)])
def test_the_same_decisions_as_the_eager_order(start_nodes, seed):
    lazy = sequence(lambda policy, view, rng: policy.decide(view, rng), start_nodes, 300, seed)
    eager = sequence(eager_decide, start_nodes, 300, seed)
    assert lazy == eager
    kinds = {kind for kind, *_ in lazy}
    assert kinds == {"Evaluate", "Expand"} or start_nodes == 7000  # both branches (big: pruned evaluations)
