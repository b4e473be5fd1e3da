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


def uncached(monkeypatch) -> None:
    """The decision as it was before the kept arrays: the open ids found afresh on every call (so no bounds
    are kept for them), the view's arrays made afresh, and every tail pick's Beta inverted."""
    from search import thompson, tree

    fresh = tree.TreeStats.open_node_ids

    def afresh(self):
        self._open_nodes = None
        return fresh(self).copy()

    view = tree.TreeStats.view

    def new_view(self, *args, **kwargs):
        self._frozen = {}
        return view(self, *args, **kwargs)

    monkeypatch.setattr(tree.TreeStats, "open_node_ids", afresh)
    monkeypatch.setattr(tree.TreeStats, "view", new_view)
    monkeypatch.setattr(thompson, "TAIL_FLOOR", np.inf)


def busy_sequence(start_nodes: int, steps: int, seed: int, check: bool) -> list[tuple]:
    """Decisions on a big tree (pruned draws, own and clade) with 8 evaluations in flight that finish or are
    abandoned in random order, expansions forced on every 4th decision, 30 % invalid children; with `check`,
    the kept open ids and bounds are compared with their definitions after every step."""
    from search.bounds import posterior_bounds

    world = np.random.default_rng(seed)
    tree = TreeStats(8, capacity=start_nodes + steps + 8)
    tree.add_node(None, True)
    quality, usable = [0.5], [0]
    for node in range(1, start_nodes):
        parent = usable[int(world.integers(len(usable)))]
        if tree.add_node(parent, bool(world.random() > 0.15)) == node and tree.valid[node]:
            usable.append(node)
        quality.append(float(np.clip(quality[parent] + world.normal(0, 0.1), 0, 1)))
    for node in range(start_nodes):
        if tree.valid[node]:
            for instance in range(int(world.integers(1, 8))):
                tree.finish_evaluation(
                    node, instance, float(np.clip(quality[node] + world.normal(0, 0.2), 0, 1)), started=False
                )
    policy, rng, out, flying = HGMPolicy(), np.random.default_rng(seed + 1), [], []
    for step in range(steps):
        view = tree.view(pending_expansions=-tree.n if step % 4 == 0 else 0, budget=10**6)
        decision = policy.decide(view, rng)
        assert decision is not None
        if isinstance(decision, Evaluate):
            tree.start_evaluation(decision.node_id, decision.instance)
            flying.append((decision.node_id, decision.instance))
        else:
            tree.add_node(decision.node_id, bool(world.random() > 0.3))
            quality.append(quality[decision.node_id])
        out.append((type(decision).__name__, decision.node_id, getattr(decision, "instance", None), decision.detail))
        while len(flying) >= 8:
            node, instance = flying.pop(int(world.integers(len(flying))))
            if world.random() < 0.1:
                tree.abandon_evaluation(node, instance)
            else:
                tree.finish_evaluation(node, instance, float(np.clip(quality[node] + world.normal(0, 0.2), 0, 1)))
        if check:
            assert np.array_equal(tree.open_node_ids(), np.flatnonzero(tree.open_mask[: tree.n]))
            bounds = posterior_bounds(tree.view())
            bounds.sync()
            for family in bounds.families.values():
                if family.kept_for is not None and family.kept_for is tree.open_node_ids():
                    assert np.array_equal(family.kept, family.upper[family.kept_for])
    return out


def test_the_kept_arrays_decide_as_the_fresh_ones(monkeypatch):
    kept = busy_sequence(6000, 240, 5, check=True)
    with monkeypatch.context() as patched:
        uncached(patched)
        fresh = busy_sequence(6000, 240, 5, check=False)
    assert kept == fresh
    kinds = [kind for kind, *_ in kept]
    assert kinds.count("Expand") >= 40 and kinds.count("Evaluate") >= 120
    assert any(detail["candidates"] >= 4096 for kind, _, _, detail in kept if kind == "Evaluate")  # pruned draws
