"""Continuous evidence (search.evidence): one evaluation worth w Bernoulli trials, in hgm, uct, dgm and the final
rule."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from search import DGMPolicy, HGMPolicy, UCTPolicy
from search.decisions import Expand
from search.evidence import W_MAX, clade_best, evidence_weight, frontier_ranks, probe_variance
from search.final import epsilon_quantile
from search.tree import TreeStats


def one_instance_tree() -> TreeStats:
    """Circle packing's picture after a few children: 0 seed 0.868 -> 1 (0.879), 2 (0.0, broken), 3 (0.5)."""
    tree = TreeStats(1)
    for parent, score in ((None, 0.868), (0, 0.879), (0, 0.0), (0, 0.5)):
        node = tree.add_node(parent, True)
        tree.finish_evaluation(node, 0, score, started=False)
    return tree


def test_the_weight_formula() -> None:
    assert evidence_weight(0.7, None) == 1.0  # noise unknown: HGM as published
    assert evidence_weight(0.7, 0.7 * 0.3) == pytest.approx(1.0)  # a Bernoulli score's own variance
    assert evidence_weight(0.8, 0.16 / 10) == pytest.approx(10.0)  # a tenth of it: ten trials
    assert evidence_weight(0.868, 0.0) == W_MAX  # a deterministic program: capped
    assert evidence_weight(0.5, 1.0) == 1.0  # never below one trial
    assert probe_variance(0.5, 0.7) == pytest.approx(0.02)
    assert probe_variance(0.868, 0.868) == 0.0


def expansion_counts(w: float, draws: int = 3000) -> Counter:
    policy, rng = HGMPolicy(), np.random.default_rng(0)
    view = one_instance_tree().view(evidence=w)
    counts: Counter = Counter()
    for _ in range(draws):
        decision = policy.decide(view, rng)
        assert isinstance(decision, Expand)  # nothing left to evaluate on one instance
        counts[decision.node_id] += 1
    return counts


def test_hgm_stops_drawing_broken_children_and_follows_the_best_clade() -> None:
    flat, weighted = expansion_counts(1.0), expansion_counts(W_MAX)
    # w = 1: Beta(1, 2) for the broken child wins often; w = 64: never
    assert flat[2] > 0.05 * 3000  # 253 of 3000 with this generator
    assert weighted[2] == weighted[3] == 0
    # the seed's clade value (0.879) is realised by its child 1, so node 1 is drawn, not the seed; the clades
    # whose best is 0.5 or 0 rank below it (q = 1/3, 0) and never win against Beta(65, 1)
    assert weighted[0] == 0 and weighted[1] == 3000
    assert flat[0] < 0.25 * 3000  # under pooled means the seed's clade, diluted by its broken child, loses


def test_frontier_ranks_keep_the_nodes_that_realise_their_clade_and_rank_them() -> None:
    tree = one_instance_tree()  # 0 (0.868) -> 1 (0.879), 2 (0.0), 3 (0.5)
    grandchild = tree.add_node(3, True)
    tree.finish_evaluation(grandchild, 0, 0.95, started=False)  # 4 (0.95) below 3: 3 and 0 no longer realise
    view = tree.view(evidence=W_MAX)
    kept, q = frontier_ranks(view, np.arange(view.n))
    assert kept.tolist() == [1, 2, 4]
    # measured means sorted: 0.0, 0.5, 0.868, 0.879, 0.95: q = (count below) / 4
    np.testing.assert_allclose(q, [3 / 4, 0.0, 1.0])


def test_hgm_gives_the_top_tenth_the_expansions_and_the_best_most_not_all() -> None:
    # a chain of 30 agents improving by about 0.001 each, each with a broken child and a slightly worse one:
    # gaps far below a Beta(1 + 64 B, ...) spread, where draws over raw means would be nearly uniform
    tree = TreeStats(1)
    node = tree.add_node(None, True)
    tree.finish_evaluation(node, 0, 0.88, started=False)
    for k in range(1, 30):
        leaf = tree.add_node(node, True)
        tree.finish_evaluation(leaf, 0, 0.0, started=False)
        worse = tree.add_node(node, True)
        tree.finish_evaluation(worse, 0, float(tree.s[node]) - 0.0007, started=False)
        better = tree.add_node(node, True)
        tree.finish_evaluation(better, 0, 0.88 + 0.001 * k + 0.0005 * (k % 3), started=False)
        node = better
    view, rng, policy = tree.view(evidence=W_MAX), np.random.default_rng(0), HGMPolicy()
    means = view.s / np.maximum(view.n_evals, 1)
    frontier, _ = frontier_ranks(view, np.arange(view.n))
    top = set(frontier[np.argsort(-means[frontier])][: len(frontier) // 10].tolist())
    picks = [policy.decide(view, rng).node_id for _ in range(2000)]
    in_top = sum(p in top for p in picks)
    best = int(np.argmax(means))
    assert in_top > 0.9 * 2000  # 2000 of 2000 with this generator
    assert 0.5 * 2000 < picks.count(best) < 0.95 * 2000  # the best agent most often, not always (1634)
    assert all(means[p] > 0 for p in picks)  # never a broken child


def test_clade_best_is_the_best_own_mean_below_each_node() -> None:
    tree = one_instance_tree()
    grandchild = tree.add_node(3, True)
    tree.finish_evaluation(grandchild, 0, 0.95, started=False)
    tree.add_node(1, True)  # not evaluated: counts as 0
    best = clade_best(tree.view())
    np.testing.assert_allclose(best, [0.95, 0.879, 0.0, 0.95, 0.95, 0.0])


def test_uct_bonus_shrinks_with_the_square_root_of_w() -> None:
    tree = one_instance_tree()
    kids, plain = UCTPolicy().ucb(tree.view(), 0)
    _, weighted = UCTPolicy().ucb(tree.view(evidence=16.0), 0)
    q = np.array([0.879, 0.0, 0.5])
    assert list(kids) == [1, 2, 3]
    np.testing.assert_allclose(plain - q, 4.0 * (weighted - q))
    assert weighted[0] == pytest.approx(0.879 + math.sqrt(2) * math.sqrt(math.log(4) / 16.0))


def test_dgm_uses_ranks_under_continuous_evidence() -> None:
    tree = one_instance_tree()
    flat = DGMPolicy().weights(tree.view())
    ranked = DGMPolicy().weights(tree.view(evidence=W_MAX))
    # raw means: 0.868 and 0.879 sit on the sigmoid's flat top (nearly equal weights)
    assert flat[1] / (flat[0] * (1 + 3)) == pytest.approx(1.0, abs=0.01)  # the seed has 3 children

    # ranks 4, 3, 1, 2 of 4 -> quantiles 0.875, 0.625, 0.125, 0.375 -> the best node clearly ahead
    def sig(x):
        return 1.0 / (1.0 + math.exp(-10.0 * (x - 0.5)))

    children = tree.n_valid_children[:4]
    expected = [sig(q) / (1 + c) for q, c in zip((0.625, 0.875, 0.125, 0.375), children)]
    np.testing.assert_allclose(ranked, expected)
    assert ranked[1] > 3 * ranked[3]


def test_the_final_rule_reads_w() -> None:
    tree = TreeStats(1)
    for parent, score in ((None, 0.868), (0, 0.879)):
        tree.finish_evaluation(tree.add_node(parent, True), 0, score, started=False)
    plain = epsilon_quantile(tree.view(), 0.1)
    weighted = epsilon_quantile(tree.view(evidence=W_MAX), 0.1)
    assert plain.node_id == weighted.node_id == 1
    assert "w = 64" in weighted.rule and "w =" not in plain.rule
    assert weighted.detail["quantile"] > plain.detail["quantile"] + 0.2  # a narrow posterior: 0.8 vs 0.5
