"""Staged (cascade) evaluation around any policy: a first batch, the rest only above the threshold."""

from __future__ import annotations

import numpy as np
import pytest
from hand_trees import rooted

from search import POLICIES, BestOfNPolicy, DGMPolicy, make_policy
from search.cascade import Stage, Staged, parse_stages, with_stages
from search.decisions import Evaluate, Expand
from search.final import WithFinal
from search.tree import TreeStats

N = 6


def test_a_node_below_the_threshold_after_its_batch_is_never_evaluated_again():
    tree = rooted(N)
    policy = Staged(BestOfNPolicy(), 2, 0.5)
    rng = np.random.default_rng(0)
    scores = {}
    for _ in range(200):
        decision = policy.decide(tree.view(), rng)
        if isinstance(decision, Expand):
            child = tree.add_node(decision.node_id, True)
            scores[child] = 0.0 if child % 2 else 1.0  # odd children fail their batch, even ones pass
            continue
        tree.finish_evaluation(decision.node_id, decision.instance, scores[decision.node_id], started=False)
    children = sorted(scores)
    assert len(children) > 10
    for child in children[:-1]:  # the newest may be mid-batch
        assert tree.n_evals[child] == (2 if child % 2 else N), child


def test_the_batch_finishes_before_the_next_instances_start():
    tree = rooted(N)
    child = tree.add_node(0, True)
    policy = Staged(BestOfNPolicy(), 2, 0.5)
    rng = np.random.default_rng(1)
    first = policy.decide(tree.view(), rng)
    tree.start_evaluation(child, first.instance)
    second = policy.decide(tree.view(), rng)
    assert isinstance(second, Evaluate) and second.node_id == child and second.instance != first.instance
    tree.start_evaluation(child, second.instance)
    # two tried, none finished: the child waits; the policy expands instead of a third instance
    assert not Staged(BestOfNPolicy(), 2, 0.5).stage_view(tree.view()).open_mask[child]
    assert isinstance(policy.decide(tree.view(), rng), Expand)
    tree.finish_evaluation(child, first.instance, 1.0)
    assert isinstance(policy.decide(tree.view(), rng), Expand)  # one of two finished: still waiting
    tree.finish_evaluation(child, second.instance, 0.0)  # mean 0.5 >= 0.5: passes (DGM's >=)
    decision = policy.decide(tree.view(), rng)
    assert isinstance(decision, Evaluate) and decision.node_id == child
    assert "stage" not in decision.detail  # past the first stage


def test_exactly_at_and_just_below_the_threshold():
    tree = rooted(5)
    at, below = tree.add_node(0, True), tree.add_node(0, True)
    for i, (x, y) in enumerate([(1.0, 1.0), (0.0, 0.0), (0.2, 0.19)]):  # means 0.4 and 0.3967
        tree.finish_evaluation(at, i, x, started=False)
        tree.finish_evaluation(below, i, y, started=False)
    hidden, passed, k = Staged(BestOfNPolicy(), 3, 0.4).masks(tree.view())
    assert k == 3
    assert not hidden[at] and passed[at]
    assert hidden[below] and not passed[below]
    assert passed[0] and not hidden[0]  # the root ran every instance


def test_fraction_batches_and_a_batch_covering_every_instance():
    assert Stage(0.25, 0.5).size(16) == 4 and Stage(0.25, 0.5).size(3) == 1 and Stage(1 / 6, 0.4).size(12) == 2
    assert Stage(3, 0.5).size(100) == 3
    tree = rooted(4)
    child = tree.add_node(0, True)
    view = tree.view()
    assert Staged(BestOfNPolicy(), 4, 0.9).stage_view(view) is view  # a stage as large as the dev set: no-op
    assert Staged(BestOfNPolicy(), 1.0, 0.9).stage_view(view) is view
    assert view.open_mask[child]


def test_nested_stages():
    policy = with_stages(BestOfNPolicy(), "2:0.5,4:0.75")
    assert isinstance(policy, Staged) and (policy.first, policy.threshold) == (2, 0.5)
    assert isinstance(policy.inner, Staged) and (policy.inner.first, policy.inner.threshold) == (4, 0.75)
    tree = rooted(8)
    rng = np.random.default_rng(2)
    plan = {1: [1, 1, 0, 0], 2: [1, 1, 1, 1], 3: [0, 0]}  # 1: stops at 4 (0.5 < 0.75); 2: goes on; 3: stops at 2
    for _ in (1, 2, 3):
        tree.add_node(0, True)
    done = {1: 0, 2: 0, 3: 0}
    for _ in range(40):
        decision = policy.decide(tree.view(can_expand=False), rng)
        if decision is None:
            break
        node = decision.node_id
        score = plan[node][done[node]] if done[node] < len(plan[node]) else 1.0
        done[node] += 1
        tree.finish_evaluation(node, decision.instance, score, started=False)
    assert list(tree.n_evals[1:4]) == [4, 8, 2]


def test_final_choice_only_among_nodes_that_passed():
    tree = rooted(6)  # root mean 0.5, passed (every instance)
    passed = tree.add_node(0, True)
    failed = tree.add_node(0, True)
    for i, x in enumerate([1, 1, 0, 0, 0, 0.4]):  # passed its batch at 1.0, mean 0.4 in the end
        tree.finish_evaluation(passed, i, x, started=False)
    for i in range(2):
        tree.finish_evaluation(failed, i, 0.45, started=False)  # mean 0.45 < 0.5 after its batch
    plain = WithFinal(BestOfNPolicy(), "max_mean")
    rng = np.random.default_rng(0)
    assert plain.select_final(tree.view(), rng).node_id == 0
    tree.s[0] = 0.0  # the root at 0: without the filter the failed node (0.45) would win
    assert plain.select_final(tree.view(), rng).node_id == failed
    assert Staged(plain, 2, 0.5).select_final(tree.view(), rng).node_id == passed
    # none passed yet: every node is considered
    young = TreeStats(6)
    young.add_node(None, True)
    young.finish_evaluation(0, 0, 0.1, started=False)
    assert Staged(plain, 2, 0.5).select_final(young.view(), rng).node_id == 0


def test_parse_stages_and_its_errors():
    assert parse_stages("4:0.5") == (Stage(4, 0.5),)
    assert parse_stages(" 25%:0.4 , 50%:0.6 ") == (Stage(0.25, 0.4), Stage(0.5, 0.6))
    assert parse_stages("none") == () and parse_stages("") == ()
    for bad in ("4", "x:0.5", "4:y", "0:0.5", "150%:0.5", "4:1.5", "8:0.5,4:0.6", "4:0.5,"):
        with pytest.raises(ValueError) as error:
            parse_stages(bad)
        message = str(error.value)
        assert "\n" not in message and "stages" in message
    with pytest.raises(ValueError):
        make_policy("hgm", stages="nonsense")


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_any_policy_can_be_staged(name):
    policy = make_policy(name, stages="2:0.5")
    assert isinstance(policy, Staged) and policy.name == name
    tree = rooted(6)
    rng = np.random.default_rng(3)
    low = tree.add_node(0, True)
    for i in range(2):
        tree.finish_evaluation(low, i, 0.0, started=False)
    for _ in range(30):
        decision = policy.decide(tree.view(), rng)
        if decision is None:
            break
        assert decision.node_id != low or isinstance(decision, Expand)
        if isinstance(decision, Expand):
            child = tree.add_node(decision.node_id, True)
            assert child
        else:
            tree.finish_evaluation(decision.node_id, decision.instance, 0.7, started=False)
    assert tree.n_evals[low] == 2


def test_score_methods_go_through_the_stage():
    tree = rooted(6)
    child = tree.add_node(0, True)
    tree.finish_evaluation(child, 0, 1.0, started=False)
    tree.finish_evaluation(child, 1, 1.0, started=False)
    staged = Staged(DGMPolicy(), 2, 0.5)
    # past its batch the child is open again for the rest: not a candidate parent yet
    assert staged.probabilities(tree.view())[child] == 0.0
    assert list(staged.probabilities(tree.view())) == [1.0, 0.0]
    with pytest.raises(AttributeError):
        Staged(BestOfNPolicy(), 2, 0.5).probabilities  # noqa: B018 - the inner policy has none
