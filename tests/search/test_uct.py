"""UCT with progressive widening on a hand-built tree: UCB1 on clade means, widening C N^alpha."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hand_trees import add

from search import UCTPolicy, make_policy
from search.decisions import Evaluate, Expand
from search.tree import TreeStats

N = 4


def hand_tree() -> TreeStats:
    """0 root (0.5) -> 1 a (0.75), 2 b (0.25)."""
    tree = TreeStats(N)
    add(tree, None, 0.5)
    add(tree, 0, 0.75)
    add(tree, 0, 0.25)
    return tree


def test_ucb1_on_clade_means():
    view = hand_tree().view()
    kids, scores = UCTPolicy().ucb(view, 0)
    # N_root = 12 clade evaluations, N_a = N_b = 4: Q + sqrt(2) sqrt(ln 12 / 4)
    assert list(kids) == [1, 2]
    assert scores == pytest.approx([1.864653903637358, 1.364653903637358])
    assert scores[0] == pytest.approx(0.75 + math.sqrt(2) * math.sqrt(math.log(12) / 4))


def test_progressive_widening_decides_where_to_expand():
    view = hand_tree().view()
    # C = 1: 2 valid children < sqrt(12) = 3.46: widen the root
    decision = UCTPolicy().decide(view, np.random.default_rng(0))
    assert isinstance(decision, Expand) and decision.node_id == 0 and "widening" in decision.detail["rule"]
    # C = 0.5: 2 >= 1.73, descend to a (UCB 1.86 > 1.36); a: 0 children < 0.5 sqrt(4) = 1: widen a
    decision = UCTPolicy(widening_c=0.5).decide(view, np.random.default_rng(0))
    assert decision.node_id == 1 and decision.detail["path"] == [0, 1]


def test_the_value_is_the_clade_mean():
    tree = hand_tree()
    add(tree, 1, 0.0)  # a's child scores 0: a's clade falls to 3 / 8
    view = tree.view()
    _, scores = UCTPolicy().ucb(view, 0)
    # N_root = 16, a: Q = 0.375, N = 8; b: Q = 0.25, N = 4
    assert scores == pytest.approx([1.2075546111576978, 1.4274100225154747])
    assert scores[0] == pytest.approx(0.375 + math.sqrt(2) * math.sqrt(math.log(16) / 8))
    # C = 0.5: root has 2 >= 0.5 * 4 children: descend to b; b: 0 < 0.5 * sqrt(4): widen b
    assert UCTPolicy(widening_c=0.5).decide(view, np.random.default_rng(0)).node_id == 2
    assert UCTPolicy().scores(view)[1] == pytest.approx(0.375)


def test_invalid_and_unsettled_children_are_not_entered():
    tree = hand_tree()
    add(tree, 0, None, valid=False)
    child = add(tree, 0, None)
    for i in range(N):
        tree.start_evaluation(child, i)  # in flight: not entered, not counted as open
    kids, _ = UCTPolicy().ucb(tree.view(), 0)
    assert list(kids) == [1, 2]


def test_open_children_are_evaluated_first_and_decisions_are_deterministic():
    tree = hand_tree()
    child = add(tree, 1, None)
    decision = UCTPolicy().decide(tree.view(), np.random.default_rng(0))
    assert isinstance(decision, Evaluate) and decision.node_id == child
    a, b = np.random.default_rng(2), np.random.default_rng(2)
    view = hand_tree().view()
    assert [UCTPolicy().decide(view, a) for _ in range(5)] == [UCTPolicy().decide(view, b) for _ in range(5)]


def test_edge_cases():
    policy = make_policy("uct")
    rng = np.random.default_rng(0)
    assert policy.decide(TreeStats(N).view(), rng) is None
    tree = TreeStats(N)
    add(tree, None, 0.5)
    for _ in range(10):
        add(tree, 0, None, valid=False)  # all invalid: nothing to descend into, the root again
    assert policy.decide(tree.view(), rng).node_id == 0
    tree = TreeStats(N)
    add(tree, None, None, valid=False)
    assert policy.decide(tree.view(), rng) is None
