"""best_of_n: n children of the root, each fully evaluated, the best mean reported: the honest baseline."""

from __future__ import annotations

import numpy as np
from hand_trees import rooted

from search import BestOfNPolicy, make_policy
from search.decisions import Evaluate, Expand
from search.tree import TreeStats

N = 4


def test_only_root_children_each_evaluated_fully():
    tree = rooted(N)
    policy = make_policy("best_of_n")
    rng = np.random.default_rng(0)
    for _ in range(60):
        decision = policy.decide(tree.view(), rng)
        if isinstance(decision, Expand):
            assert decision.node_id == 0 and "context" not in decision.detail
            tree.add_node(0, bool(rng.random() > 0.2))
        else:
            tree.finish_evaluation(decision.node_id, decision.instance, float(rng.random()), started=False)
    assert (tree.parent[1 : tree.n] == 0).all()
    valid = tree.valid[: tree.n]
    assert (tree.n_evals[: tree.n][valid][:-1] == N).all()  # all but possibly the newest


def test_final_is_max_mean_over_fully_evaluated_nodes():
    tree = rooted(N)
    lucky, solid, fair = (tree.add_node(0, True) for _ in range(3))
    tree.finish_evaluation(lucky, 0, 1.0, started=False)  # one lucky evaluation
    for i in range(N):
        tree.finish_evaluation(solid, i, 0.75, started=False)
        tree.finish_evaluation(fair, i, 0.7, started=False)
    choice = BestOfNPolicy().select_final(tree.view(), np.random.default_rng(0))
    assert choice.node_id == solid and choice.detail["mean"] == 0.75


def test_deterministic_and_edge_cases():
    rng = np.random.default_rng(0)
    assert BestOfNPolicy().decide(TreeStats(N).view(), rng) is None
    tree = TreeStats(N)
    tree.add_node(None, True)
    assert isinstance(BestOfNPolicy().decide(tree.view(), rng), Evaluate)
    tree = rooted(N)
    for _ in range(3):
        tree.add_node(0, False)
    a, b = np.random.default_rng(1), np.random.default_rng(1)
    assert [BestOfNPolicy().decide(tree.view(), a) for _ in range(5)] == [
        BestOfNPolicy().decide(tree.view(), b) for _ in range(5)
    ]
    assert BestOfNPolicy().decide(tree.view(), rng).node_id == 0
