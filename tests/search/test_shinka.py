"""ShinkaEvolve's parent strategies on a hand-built tree: weighted (median/MAD sigmoid), power law, beam."""

from __future__ import annotations

import numpy as np
import pytest
from hand_trees import add

from search import (
    ShinkaBeamPolicy,
    ShinkaPowerLawPolicy,
    ShinkaWeightedPolicy,
    make_policy,
)
from search.decisions import Evaluate, Expand
from search.tree import TreeStats

N = 4


def hand_tree() -> TreeStats:
    """0 root 0.5 -> 1 a 0.75, 2 b 0.25, 3 c 1.0, 4 invalid; 1 -> 5 a1 0.5."""
    tree = TreeStats(N)
    add(tree, None, 0.5)
    add(tree, 0, 0.75)
    add(tree, 0, 0.25)
    add(tree, 0, 1.0)
    add(tree, 0, None, valid=False)
    add(tree, 1, 0.5)
    return tree


# sigmoid(x) = 1 / (1 + e^-x), by hand
SIG_10 = 0.9999546021312976
SIG_M10 = 4.5397868702434395e-05
SIG_20 = 0.9999999979388463


def test_weighted_formula_median_and_mad():
    view = hand_tree().view()
    # scores 0.5, 0.75, 0.25, 1.0, 0.5: median 0.5; |a - median| = 0, .25, .25, .5, 0: MAD 0.25
    # lambda (a - median) / MAD = 0, 10, -10, 20, 0; children (valid): 3, 1, 0, 0, -, 0
    w = ShinkaWeightedPolicy().weights(view)
    expected = {0: 0.5 / 4, 1: SIG_10 / 2, 2: SIG_M10 / 1, 3: SIG_20 / 1, 4: 0.0, 5: 0.5 / 1}
    for node, value in expected.items():
        assert w[node] == pytest.approx(value, rel=1e-12, abs=1e-15)
    p = ShinkaWeightedPolicy().probabilities(view)
    total = 0.125 + SIG_10 / 2 + SIG_M10 + SIG_20 + 0.5
    assert total == pytest.approx(2.1250226968731973)
    assert p[0] == pytest.approx(0.125 / total) and p[0] == pytest.approx(0.058822901131327966)
    assert p[3] == pytest.approx(0.4705832080806794)
    assert p[2] == pytest.approx(2.136347473805045e-05)
    assert p.sum() == pytest.approx(1.0)


def test_weighted_when_mad_is_zero():
    tree = TreeStats(N)
    add(tree, None, 0.5)
    for mean in (0.5, 0.5, 0.75, 0.25):
        add(tree, 0, mean)
    # median 0.5, deviations 0, 0, 0, .25, .25: MAD 0 -> scale 1e-6 (ShinkaEvolve's floor): a step above the
    # median saturates to 1, below to 0, at the median 1/2
    w = ShinkaWeightedPolicy().weights(tree.view())
    assert w == pytest.approx([0.5 / 5, 0.5, 0.5, 1.0, 0.0], abs=1e-12)
    assert ShinkaWeightedPolicy().probabilities(tree.view()) == pytest.approx(
        [0.1 / 2.1, 0.5 / 2.1, 0.5 / 2.1, 1.0 / 2.1, 0.0], abs=1e-12
    )


def test_archive_keeps_the_best_nodes_only():
    view = hand_tree().view()
    # archive of 2: c (1.0) and a (0.75); median 0.875, MAD 0.125: normalized -1 and +1
    p = ShinkaWeightedPolicy(archive_size=2).probabilities(view)
    assert p[1] == pytest.approx(2.2699449604533576e-05) and p[3] == pytest.approx(0.9999773005503955)
    assert p[[0, 2, 4, 5]].sum() == 0.0


def test_power_law_by_rank():
    view = hand_tree().view()
    # ranks: c 1, a 2, root 3 (0.5, older than a1), a1 4, b 5: p = (1, 1/2, 1/3, 1/4, 1/5) / (137 / 60)
    p = ShinkaPowerLawPolicy().probabilities(view)
    expected = {3: 60 / 137, 1: 30 / 137, 0: 20 / 137, 5: 15 / 137, 2: 12 / 137, 4: 0.0}
    for node, value in expected.items():
        assert p[node] == pytest.approx(value, rel=1e-12)
    uniform = ShinkaPowerLawPolicy(alpha=0.0).probabilities(view)
    assert uniform[[0, 1, 2, 3, 5]] == pytest.approx([0.2] * 5)


@pytest.mark.parametrize("policy", [ShinkaWeightedPolicy(), ShinkaPowerLawPolicy()])
def test_decide_matches_the_probabilities_and_is_deterministic(policy):
    view = hand_tree().view()
    p = policy.probabilities(view)
    counts = np.zeros(view.n)
    for seed in range(4000):
        decision = policy.decide(view, np.random.default_rng(seed))
        assert isinstance(decision, Expand)
        counts[decision.node_id] += 1
    assert np.abs(counts / counts.sum() - p).max() < 0.025
    a, b = np.random.default_rng(11), np.random.default_rng(11)
    assert [policy.decide(view, a) for _ in range(30)] == [policy.decide(view, b) for _ in range(30)]


def test_beam_locks_onto_a_parent_for_five_children_then_switches_to_the_best():
    tree = TreeStats(N)
    add(tree, None, 0.5)
    policy = ShinkaBeamPolicy()
    rng = np.random.default_rng(0)
    assert policy.decide(tree.view(), rng).node_id == 0  # no beam yet: the best, the root
    means = [0.25, 0.75, 0.5, 1.0]
    for mean in means:
        add(tree, 0, mean)
        assert policy.decide(tree.view(), rng).node_id == 0  # fewer than 5 children: continue
    add(tree, 0, 0.0)  # the fifth child
    decision = policy.decide(tree.view(), rng)
    assert decision.node_id == 4 and "best" in decision.detail["rule"]  # node 4 scored 1.0
    add(tree, 4, 0.25)
    assert policy.decide(tree.view(), rng).node_id == 4  # locked onto node 4 now
    assert list(policy.probabilities(tree.view())) == [0, 0, 0, 0, 1, 0, 0]


def test_beam_best_stays_locked_while_it_is_the_best():
    tree = TreeStats(N)
    add(tree, None, 1.0)
    for _ in range(5):
        add(tree, 0, 0.25)
    assert ShinkaBeamPolicy().decide(tree.view(), np.random.default_rng(0)).node_id == 0


def test_edge_cases_for_every_strategy():
    for name in ("shinka", "shinka_power_law", "shinka_beam"):
        policy = make_policy(name)
        rng = np.random.default_rng(0)
        assert policy.decide(TreeStats(N).view(), rng) is None
        tree = TreeStats(N)
        tree.add_node(None, True)
        assert isinstance(policy.decide(tree.view(), rng), Evaluate)
        for i in range(N):
            tree.finish_evaluation(0, i, 0.5, started=False)
        assert list(policy.probabilities(tree.view())) == [1.0]  # a single node, MAD 0
        for _ in range(6):
            tree.add_node(0, False)  # all children invalid: the root
        assert policy.decide(tree.view(), rng).node_id == 0
        child = add(tree, 0, None)
        decision = policy.decide(tree.view(), rng)
        assert isinstance(decision, Evaluate) and decision.node_id == child


def stagnating_shinka() -> TreeStats:
    """Island 0 alone: 1 (.75) improves on the root, 2 (.5) and 3 (.25) do not: with S = 2, island 1 is
    spawned after node 3, from the root (no other island yet), and plays first: 4 (1.0, the root's child on
    its turn) is its own. Then island 0 again: 5 (.5) and 7 (.25) under 1, with 6 (.5) on island 1's turn
    between: island 0 stagnates again, and island 2 is seeded from node 4, the best of island 1."""
    tree = TreeStats(N)
    add(tree, None, 0.5)
    for parent, mean in ((0, 0.75), (1, 0.5), (1, 0.25), (0, 1.0), (1, 0.5), (4, 0.5), (1, 0.25)):
        add(tree, parent, mean)
    return tree


def test_shinka_spawns_islands_on_stagnation_from_the_root_then_from_the_best_of_another():
    from search.generational import settled_mask
    from search.shinka_islands import shinka_islands

    policy = ShinkaWeightedPolicy(island_stagnation=2)
    tree = stagnating_shinka()
    islands = shinka_islands(tree.view(), settled_mask(tree.view()), 2)
    first, second = islands.spawns
    assert (first.at, first.island, first.stagnated, first.seed, first.seed_island) == (3, 1, 0, 0, -1)
    assert (second.at, second.island, second.stagnated, second.seed, second.seed_island) == (7, 2, 0, 4, 1)
    assert "seeded from node 4 (the best of island 1)" in second.record()["reason"] and not second.retires
    assert list(islands.home) == [-1, 0, 0, 0, 1, 0, 1, 0]
    assert [islands.turn(c) for c in (4, 5, 6, 7, 8, 9, 10)] == [1, 0, 1, 0, 2, 0, 1]  # the newest first
    node, detail = policy.parent(tree.view(), np.random.default_rng(0))  # island 2's first: its seed, node 4
    assert node == 4 and detail["island"] == 2 and detail["islands"] == 3
    assert detail["island_spawn"]["seed"] == 4
    assert "island_spawn" not in policy.parent(tree.view(pending_expansions=1), np.random.default_rng(0))[1]
    assert np.flatnonzero(policy.probabilities(tree.view(pending_expansions=2))).tolist() == [0, 4, 6]  # island 1
    assert ShinkaWeightedPolicy().parent(tree.view(), np.random.default_rng(0))[1].get("island") is None
    same = [ShinkaPowerLawPolicy(island_stagnation=2).decide(tree.view(), np.random.default_rng(3)) for _ in "ab"]
    assert same[0] == same[1]
