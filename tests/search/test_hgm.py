"""The HGM policy's formulas on hand-built trees."""

from __future__ import annotations

import numpy as np
import pytest

from search import GreedyPolicy, HGMPolicy, RandomPolicy, make_policy
from search.decisions import Evaluate, Expand
from search.tree import TreeStats

N = 16


def seeded_root(scores=None) -> TreeStats:
    tree = TreeStats(N)
    tree.add_node(None, True)
    for i, x in enumerate(scores if scores is not None else [0.5] * N):
        tree.finish_evaluation(0, i, x, started=False)
    return tree


def test_widening_expands_while_t_alpha_covers_the_nodes():
    tree = seeded_root()  # t = 16, 16 ** 0.6 = 5.28
    rng = np.random.default_rng(0)
    policy = HGMPolicy()
    for _ in range(5):
        assert isinstance(policy.decide(tree.view(), rng), Expand)
        tree.add_node(0, True)
    # 5 valid children: 5 <= 5.28, expand once more; then 6 > 5.28, evaluate
    assert isinstance(policy.decide(tree.view(), rng), Expand)
    tree.add_node(0, True)
    decision = policy.decide(tree.view(), rng)
    assert isinstance(decision, Evaluate) and decision.node_id != 0
    assert decision.detail["t_alpha"] == pytest.approx(16**0.6)


def test_pending_expansions_count_as_grown():
    tree = seeded_root()
    for _ in range(5):
        tree.add_node(0, True)
    rng = np.random.default_rng(0)
    assert isinstance(HGMPolicy().decide(tree.view(pending_expansions=0), rng), Expand)
    assert isinstance(HGMPolicy().decide(tree.view(pending_expansions=1), rng), Evaluate)


def test_invalid_children_do_not_count_and_are_never_chosen():
    tree = seeded_root()
    for _ in range(20):
        tree.add_node(0, False)
    rng = np.random.default_rng(1)
    for _ in range(50):
        decision = HGMPolicy().decide(tree.view(), rng)
        assert isinstance(decision, Expand) and decision.node_id == 0


def test_expands_when_nothing_is_left_to_evaluate():
    tree = TreeStats(1)  # one instance: 3 children make t = 4, 4 ** 0.6 = 2.3 < 3 grown
    tree.add_node(None, True)
    tree.finish_evaluation(0, 0, 0.5, started=False)
    for _ in range(3):  # widening says evaluate, but every node is fully evaluated
        child = tree.add_node(0, True)
        tree.finish_evaluation(child, 0, 0.5, started=False)
    decision = HGMPolicy().decide(tree.view(), np.random.default_rng(0))
    assert isinstance(decision, Expand) and decision.detail["rule"] == "nothing to evaluate"


def beta_win_probability(a1, b1, a2, b2) -> float:
    """P(X > Y) for X ~ Beta(a1, b1), Y ~ Beta(a2, b2), by numerical integration."""
    from scipy import integrate, stats

    return integrate.quad(lambda x: stats.beta.pdf(x, a1, b1) * stats.beta.cdf(x, a2, b2), 0, 1)[0]


def test_expansion_is_thompson_sampling_on_clade_sums():
    # root clade: its own 16 evals at 0.5 plus child 1's; child 1: 3 evals, all 1.0 -> S = 3, F = 0
    tree = seeded_root()
    good = tree.add_node(0, True)
    for i in range(3):
        tree.finish_evaluation(good, i, 1.0, started=False)
    # make widening always true: t = 19, 19 ** 0.6 = 5.8 >= 1 grown
    p_good = beta_win_probability(1 + 3, 1 + 0, 1 + 8 + 3, 1 + 8)
    rng = np.random.default_rng(123)
    picks = [HGMPolicy().decide(tree.view(), rng).node_id for _ in range(4000)]
    freq = np.mean([p == good for p in picks])
    assert abs(freq - p_good) < 0.03, (freq, p_good)


def test_temperature_sharpens_the_clade_posterior():
    tree = seeded_root()
    child = tree.add_node(0, True)
    for i in range(3):
        tree.finish_evaluation(child, i, 1.0, started=False)
    tau = 3.0
    p = beta_win_probability(1 + tau * 3, 1, 1 + tau * 11, 1 + tau * 8)
    rng = np.random.default_rng(7)
    picks = [HGMPolicy(tau=tau).decide(tree.view(), rng).node_id for _ in range(4000)]
    assert abs(np.mean([x == child for x in picks]) - p) < 0.03


def test_cooldown_temperature_formula():
    tree = seeded_root()
    view = tree.view(budget=64)  # t = 16: tau = (64 / 48) ** 2
    assert HGMPolicy(cooldown_beta=2.0).temperature(view) == pytest.approx((64 / 48) ** 2)


def test_evaluation_is_thompson_on_own_sums_over_open_nodes():
    tree = seeded_root()
    a = tree.add_node(0, True)
    b = tree.add_node(0, True)
    for i in range(4):
        tree.finish_evaluation(a, i, 1.0, started=False)
        tree.finish_evaluation(b, i, 0.0, started=False)
    p_a = beta_win_probability(1 + 4, 1, 1, 1 + 4)
    rng = np.random.default_rng(5)
    picks = []
    for _ in range(3000):
        # pending expansions keep widening shut: t = 24, 24 ** 0.6 = 6.7 < 2 + 10
        decision = HGMPolicy().decide(tree.view(pending_expansions=10), rng)
        assert isinstance(decision, Evaluate) and decision.node_id in (a, b)
        assert decision.instance >= 4  # only instances the node has not run
        picks.append(decision.node_id)
    assert abs(np.mean([p == a for p in picks]) - p_a) < 0.03


def test_final_is_the_highest_epsilon_quantile():
    tree = seeded_root()
    lucky = tree.add_node(0, True)
    tree.finish_evaluation(lucky, 0, 1.0, started=False)  # Beta(2, 1): 0.1-quantile = sqrt(0.1)
    proven = tree.add_node(0, True)
    for i in range(N):
        tree.finish_evaluation(proven, i, 0.7, started=False)  # Beta(12.2, 5.8)
    choice = HGMPolicy(epsilon=0.1).select_final(tree.view(), np.random.default_rng(0))
    assert choice.node_id == proven
    from scipy.stats import beta

    assert choice.detail["quantile"] == pytest.approx(beta.ppf(0.1, 12.2, 5.8))
    # with only the lucky node and a poor root, the lucky node's quantile is sqrt(0.1)
    tree2 = seeded_root([0.1] * N)
    lucky2 = tree2.add_node(0, True)
    tree2.finish_evaluation(lucky2, 0, 1.0, started=False)
    choice2 = HGMPolicy(epsilon=0.1).select_final(tree2.view(), np.random.default_rng(0))
    assert choice2.node_id == lucky2 and choice2.detail["quantile"] == pytest.approx(np.sqrt(0.1))


def decision_trace(policy, tree: TreeStats, seed: int, steps: int) -> list[tuple]:
    """Apply `steps` decisions of `policy` to `tree` (random scores) and list them."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(steps):
        d = policy.decide(tree.view(), rng)
        if isinstance(d, Expand):
            tree.add_node(d.node_id, True)
            out.append(("x", d.node_id))
        elif isinstance(d, Evaluate):
            tree.start_evaluation(d.node_id, d.instance)
            tree.finish_evaluation(d.node_id, d.instance, float(rng.uniform()))
            out.append(("e", d.node_id, d.instance))
    return out


@pytest.mark.parametrize("name", ["hgm", "greedy", "random"])
def test_same_seed_same_decisions(name):
    def run(seed):
        return decision_trace(make_policy(name), seeded_root(), seed, 60)

    assert run(3) == run(3)
    assert run(3) != run(4)


def test_greedy_expands_the_best_fully_evaluated_node():
    tree = seeded_root()
    better = tree.add_node(0, True)
    for i in range(N):
        tree.finish_evaluation(better, i, 0.8, started=False)
    partial = tree.add_node(0, True)
    tree.finish_evaluation(partial, 0, 1.0, started=False)
    rng = np.random.default_rng(0)
    d = GreedyPolicy().decide(tree.view(), rng)
    assert isinstance(d, Evaluate) and d.node_id == partial  # finish the child first
    for i in range(1, N):
        tree.finish_evaluation(partial, i, 0.1, started=False)
    d = GreedyPolicy().decide(tree.view(), rng)
    assert isinstance(d, Expand) and d.node_id == better


def test_unknown_policy_names_the_choices():
    with pytest.raises(ValueError, match="greedy, hgm, openevolve, random"):
        make_policy("nope")


def test_random_policy_covers_every_evaluated_node():
    tree = seeded_root()
    kids = [tree.add_node(0, True) for _ in range(3)]
    for k in kids:
        for i in range(N):
            tree.finish_evaluation(k, i, 0.5, started=False)
    rng = np.random.default_rng(0)
    picked = {RandomPolicy().decide(tree.view(), rng).node_id for _ in range(200)}
    assert picked == {0, *kids}
