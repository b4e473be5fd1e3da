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
