"""ADAS: every new agent from the root, with the archive as context; children evaluated fully first."""

from __future__ import annotations

import numpy as np
from hand_trees import rooted

from search import ADASPolicy, make_policy
from search.decisions import Evaluate, Expand
from search.tree import TreeStats

N = 3


def test_every_expansion_is_from_the_root_with_the_archive_as_context():
    tree = rooted(N)
    rng = np.random.default_rng(0)
    grand = tree.add_node(tree.add_node(0, True), True)
    for node, x in ((1, 1.0), (grand, 1.0)):
        for i in range(N):
            tree.finish_evaluation(node, i, x, started=False)
    for _ in range(20):
        decision = ADASPolicy().decide(tree.view(), rng)
        assert isinstance(decision, Expand) and decision.node_id == 0
        assert decision.detail["context"] == "archive" and decision.detail["archive"] == 3


def test_children_are_evaluated_on_every_instance_oldest_first_before_the_next():
    tree = rooted(N)
    policy = make_policy("adas")
    rng = np.random.default_rng(1)
    a, b = tree.add_node(0, True), tree.add_node(0, True)
    seen = []
    for _ in range(2 * N):
        decision = policy.decide(tree.view(), rng)
        assert isinstance(decision, Evaluate)
        seen.append(decision.node_id)
        tree.finish_evaluation(decision.node_id, decision.instance, 0.3, started=False)
    assert seen == [a] * N + [b] * N
    assert isinstance(policy.decide(tree.view(), rng), Expand)


def test_workers_stay_busy_while_evaluations_run():
    tree = rooted(N)
    child = tree.add_node(0, True)
    for i in range(N):
        tree.start_evaluation(child, i)
    decision = ADASPolicy().decide(tree.view(), np.random.default_rng(0))
    assert isinstance(decision, Expand) and decision.node_id == 0  # nothing open: write the next agent
    assert ADASPolicy().decide(tree.view(can_expand=False), np.random.default_rng(0)) is None


def test_final_is_the_best_fully_evaluated_mean_and_decisions_are_deterministic():
    tree = rooted(N)
    lucky, solid = tree.add_node(0, True), tree.add_node(0, True)
    tree.finish_evaluation(lucky, 0, 1.0, started=False)
    for i in range(N):
        tree.finish_evaluation(solid, i, 0.8, started=False)
    assert ADASPolicy().select_final(tree.view(), np.random.default_rng(0)).node_id == solid
    a, b = np.random.default_rng(5), np.random.default_rng(5)
    assert [ADASPolicy().decide(tree.view(), a) for _ in range(5)] == [
        ADASPolicy().decide(tree.view(), b) for _ in range(5)
    ]


def test_edge_cases():
    rng = np.random.default_rng(0)
    assert ADASPolicy().decide(TreeStats(N).view(), rng) is None
    tree = TreeStats(N)
    tree.add_node(None, True)
    assert isinstance(ADASPolicy().decide(tree.view(), rng), Evaluate)  # the root first
    tree = rooted(N)
    for _ in range(4):
        tree.add_node(0, False)
    assert ADASPolicy().decide(tree.view(), rng).node_id == 0
