"""DGM's parent rule on a hand-built tree: sigmoid(10 (a - 0.5)) / (1 + valid children), and its stages."""

from __future__ import annotations

import numpy as np
import pytest

from search import DGMPolicy, make_policy
from search.cascade import Staged
from search.decisions import Evaluate, Expand
from search.tree import TreeStats

N = 4


def evaluated(tree: TreeStats, node: int, scores) -> None:
    for i, x in enumerate(scores):
        tree.finish_evaluation(node, i, x, started=False)


def hand_tree() -> tuple[TreeStats, dict]:
    """root a = 0.5 with children a (0.75), b (0.25) and an invalid one; a has child a1 (1.0)."""
    tree = TreeStats(N)
    root = tree.add_node(None, True)
    evaluated(tree, root, [1, 1, 0, 0])
    a = tree.add_node(root, True)
    evaluated(tree, a, [1, 1, 1, 0])
    b = tree.add_node(root, True)
    evaluated(tree, b, [1, 0, 0, 0])
    tree.add_node(root, False)
    a1 = tree.add_node(a, True)
    evaluated(tree, a1, [1, 1, 1, 1])
    return tree, {"root": root, "a": a, "b": b, "a1": a1}


# sigmoid(10 (a - 0.5)) worked out by hand: 1 / (1 + e^-x)
SIG_0 = 0.5
SIG_2_5 = 0.9241418199787566  # a = 0.75
SIG_M2_5 = 0.07585818002124355  # a = 0.25
SIG_5 = 0.9933071490757153  # a = 1.0


def test_weights_and_probabilities_match_the_formula():
    tree, ids = hand_tree()
    view = tree.view()
    # root: 2 valid children (the invalid one is not counted, as DGM's archive never holds it)
    expected_w = {"root": SIG_0 / 3, "a": SIG_2_5 / 2, "b": SIG_M2_5 / 1, "a1": SIG_5 / 1}
    w = DGMPolicy().weights(view)
    for name, value in expected_w.items():
        assert w[ids[name]] == pytest.approx(value, rel=1e-12)
    assert w[3] == 0.0  # the invalid child
    total = SIG_0 / 3 + SIG_2_5 / 2 + SIG_M2_5 + SIG_5
    p = DGMPolicy().probabilities(view)
    assert p[ids["root"]] == pytest.approx(0.16666666666666666 / total)
    assert p[ids["a1"]] == pytest.approx(0.5850199947889205)
    assert p[ids["a"]] == pytest.approx(0.2721421280473363)
    assert p[ids["b"]] == pytest.approx(0.044677572412540965)
    assert p.sum() == pytest.approx(1.0)


def test_decide_draws_parents_with_those_probabilities():
    tree, _ = hand_tree()
    view = tree.view()
    p = DGMPolicy().probabilities(view)
    counts = np.zeros(view.n)
    for seed in range(4000):
        decision = DGMPolicy().decide(view, np.random.default_rng(seed))
        assert isinstance(decision, Expand)
        counts[decision.node_id] += 1
    assert np.abs(counts / counts.sum() - p).max() < 0.025
    assert decision.detail["rule"].startswith("sigmoid")


def test_same_seed_same_decisions():
    tree, _ = hand_tree()
    first = [DGMPolicy().decide(tree.view(), np.random.default_rng(9)).node_id for _ in range(5)]
    rng_a, rng_b = np.random.default_rng(3), np.random.default_rng(3)
    seq_a = [DGMPolicy().decide(tree.view(), rng_a).node_id for _ in range(50)]
    seq_b = [DGMPolicy().decide(tree.view(), rng_b).node_id for _ in range(50)]
    assert seq_a == seq_b and len(set(first)) == 1


def test_children_being_evaluated_are_evaluated_before_anyone_expands():
    tree, ids = hand_tree()
    child = tree.add_node(ids["a1"], True)
    decision = DGMPolicy().decide(tree.view(), np.random.default_rng(0))
    assert isinstance(decision, Evaluate) and decision.node_id == child
    # a node with evaluations still running is not a candidate parent, and is not evaluated twice at once
    for instance in range(N):
        tree.start_evaluation(child, instance)
    assert DGMPolicy().probabilities(tree.view())[child] == 0.0
    assert isinstance(DGMPolicy().decide(tree.view(), np.random.default_rng(0)), Expand)  # no stall in flight


def test_a_node_with_its_last_instances_in_flight_is_drawn_on_the_scores_back():
    """Asynchronous draws (search.generational.drawable_mask): nothing open, one score back, three in flight."""
    tree, ids = hand_tree()
    child = tree.add_node(ids["a1"], True)
    for instance in range(N):
        tree.start_evaluation(child, instance)
    tree.finish_evaluation(child, 2, 1.0)
    policy = DGMPolicy()
    weights = policy.weights(tree.view())
    assert weights[child] == pytest.approx(1 / (1 + np.exp(-10 * (1.0 - 0.5))))  # a = 1.0 from the one score
    assert weights[child] > weights[ids["a"]]
    picked = {policy.parent(tree.view(), np.random.default_rng(s))[0] for s in range(200)}
    assert child in picked
    # the same tree settled: the weights are those of the finished scores, as before
    for instance in (0, 1, 3):
        tree.finish_evaluation(child, instance, 0.0)
    assert policy.weights(tree.view())[child] == pytest.approx(1 / (1 + np.exp(-10 * (0.25 - 0.5))))


def test_edge_cases():
    rng = np.random.default_rng(0)
    empty = TreeStats(N)
    assert DGMPolicy().decide(empty.view(), rng) is None
    tree = TreeStats(N)
    tree.add_node(None, True)
    decision = DGMPolicy().decide(tree.view(), rng)  # nothing evaluated: evaluate the root
    assert isinstance(decision, Evaluate) and decision.node_id == 0
    evaluated(tree, 0, [0, 0, 0, 0])
    assert list(DGMPolicy().probabilities(tree.view())) == [1.0]  # a single node
    for _ in range(5):
        tree.add_node(0, False)  # every child invalid: the root again and again
    for seed in range(10):
        assert DGMPolicy().decide(tree.view(), np.random.default_rng(seed)).node_id == 0
    assert DGMPolicy().decide(tree.view(can_expand=False), rng) is None
    broken = TreeStats(N)
    broken.add_node(None, False)
    assert DGMPolicy().decide(broken.view(), rng) is None


def test_make_policy_gives_dgm_with_its_stages_scaled_to_the_dev_set():
    policy = make_policy("dgm")
    assert isinstance(policy, Staged) and policy.name == "dgm" and isinstance(policy.inner, DGMPolicy)
    assert policy.stage.size(60) == 10 and policy.stage.size(16) == 3 and policy.stage.size(4) == 1
    assert policy.threshold == 0.4
    assert isinstance(make_policy("dgm", stages="none"), DGMPolicy)
    # DGM's rule through the wrapper: the same probabilities on a tree where every node is past the stage
    tree, _ = hand_tree()
    assert np.allclose(policy.probabilities(tree.view()), DGMPolicy().probabilities(tree.view()))


def test_staged_dgm_stops_a_child_below_40_percent_after_its_first_batch():
    tree = TreeStats(12)  # first batch: 12 / 6 = 2 instances
    tree.add_node(None, True)
    evaluated(tree, 0, [0.5] * 12)
    policy = make_policy("dgm")
    bad = tree.add_node(0, True)
    good = tree.add_node(0, True)
    rng = np.random.default_rng(1)
    for node, score in ((bad, 0.0), (good, 1.0)):
        for _ in range(2):
            decision = policy.decide(tree.view(), rng)
            assert isinstance(decision, Evaluate) and decision.node_id == node
            assert decision.detail["stage"] == "16.6667%:0.4"
            tree.finish_evaluation(node, decision.instance, score, started=False)
    for _ in range(10):  # the good child gets its other 10 instances; the bad one never another
        decision = policy.decide(tree.view(), rng)
        assert isinstance(decision, Evaluate) and decision.node_id == good
        tree.finish_evaluation(good, decision.instance, 1.0, started=False)
    assert tree.n_evals[bad] == 2 and tree.n_evals[good] == 12
    decision = policy.decide(tree.view(), rng)
    assert isinstance(decision, Expand)  # the bad child stays a (light) candidate parent
    p = policy.probabilities(tree.view())
    assert p[bad] > 0 and p[good] > p[0] > p[bad]
