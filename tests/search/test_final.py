"""Final rules on hand-built numbers: epsilon-quantile, max mean, max mean with at least k evaluations."""

from __future__ import annotations

import numpy as np
import pytest

from search import (
    FINAL_RULES,
    BestOfNPolicy,
    HGMPolicy,
    WithFinal,
    final_rule,
    make_policy,
)
from search.final import epsilon_quantile, max_mean, max_mean_k
from search.tree import TreeStats


def hand_tree() -> TreeStats:
    """Node ids: 0 root (4 evals, mean 0.5); 1 (1 eval: 1.0); 2 (4 evals: 1.0); 3 (2 evals: 1.0, 0.9);
    4 (4 evals, mean 0.75); 5 invalid."""
    tree = TreeStats(4)
    tree.add_node(None, True)
    for i, x in enumerate([1, 0, 1, 0]):
        tree.finish_evaluation(0, i, x, started=False)
    plan = {1: [1.0], 2: [1.0] * 4, 3: [1.0, 0.9], 4: [1, 1, 1, 0]}
    for node, scores in plan.items():
        assert tree.add_node(0, True) == node
        for i, x in enumerate(scores):
            tree.finish_evaluation(node, i, x, started=False)
    tree.add_node(0, False)
    return tree


def test_max_mean_takes_the_best_mean_ties_to_the_older():
    choice = max_mean(hand_tree().view())
    assert choice.node_id == 1 and choice.detail["mean"] == 1.0  # nodes 1 and 2 both at 1.0: the older


def test_max_mean_k_needs_k_evaluations():
    view = hand_tree().view()
    assert max_mean_k(view, 2).node_id == 2  # 1 has one evaluation; 2 (1.0) beats 3 (0.95)
    assert max_mean_k(view, 4).node_id == 2
    assert max_mean_k(view).node_id == 2  # k: every dev instance (4)
    choice = max_mean_k(view, 9)  # nobody has 9: the most evaluated (4) instead
    assert choice.node_id == 2 and "at least 4" in choice.rule


def test_epsilon_quantile_prefers_proven_nodes():
    view = hand_tree().view()
    # all-ones nodes have Beta(1 + m, 1) posteriors, whose eps-quantile is eps ** (1 / (1 + m)):
    # node 1: 0.1 ** (1/2) = 0.316; node 2: 0.1 ** (1/5) = 0.631
    choice = epsilon_quantile(view, 0.1)
    assert choice.node_id == 2
    assert choice.detail["quantile"] == pytest.approx(0.1 ** (1 / 5), rel=1e-9)
    subset = TreeStats(4)
    subset.add_node(None, True)
    subset.finish_evaluation(0, 0, 1.0, started=False)
    assert epsilon_quantile(subset.view(), 0.1).detail["quantile"] == pytest.approx(0.1**0.5, rel=1e-9)


def test_rules_by_name():
    view = hand_tree().view()
    assert tuple(FINAL_RULES) == ("epsilon_quantile", "max_mean", "max_mean_k")
    assert final_rule("epsilon_quantile")(view).node_id == 2
    assert final_rule("max_mean")(view).node_id == 1
    assert final_rule("max_mean_k", k=2)(view).node_id == 2
    for bad in (
        lambda: final_rule("best"),
        lambda: final_rule("max_mean_k", k=0),
        lambda: final_rule("epsilon_quantile", epsilon=1.5),
    ):
        with pytest.raises(ValueError) as error:
            bad()
        assert "\n" not in str(error.value)


def test_with_final_changes_only_the_final_choice():
    tree = hand_tree()
    rng = np.random.default_rng(0)
    policy = WithFinal(HGMPolicy(), "max_mean")
    assert policy.name == "hgm"
    assert policy.select_final(tree.view(), rng).node_id == 1
    assert HGMPolicy().select_final(tree.view(), rng).node_id == 2
    a = policy.decide(tree.view(), np.random.default_rng(5))
    b = HGMPolicy().decide(tree.view(), np.random.default_rng(5))
    assert a == b
    assert WithFinal(BestOfNPolicy(), "max_mean_k", k=1).select_final(tree.view(), rng).node_id == 1
    with pytest.raises(ValueError):
        WithFinal(HGMPolicy(), "nope")


def test_make_policy_final_options():
    tree = hand_tree()
    rng = np.random.default_rng(0)
    assert make_policy("best_of_n").select_final(tree.view(), rng).node_id == 2
    assert make_policy("best_of_n", final="max_mean").select_final(tree.view(), rng).node_id == 1
    assert make_policy("greedy", final="max_mean_k", final_k=1).select_final(tree.view(), rng).node_id == 1
    assert make_policy("dgm", final="max_mean").select_final(tree.view(), rng).node_id in (1, 2)
    with pytest.raises(ValueError):
        make_policy("hgm", final="nope")


def test_no_evaluated_node_no_final_choice():
    tree = TreeStats(4)
    tree.add_node(None, True)
    for name in FINAL_RULES:
        assert final_rule(name)(tree.view()) is None
