"""Noisy one-instance tasks: the pooled noise estimate, which candidate is run again, and the final choice."""

from __future__ import annotations

import pytest

from search.remeasure import pick_repeat, pooled_variance, remeasure_reserve, remeasured_final


def test_pooled_variance_is_the_within_node_sample_variance() -> None:
    assert pooled_variance({0: [0.5], 1: [0.2]}) is None  # nobody ran twice
    assert pooled_variance({0: [0.5, 0.3]}) == pytest.approx(0.02)  # the probe's (x0 - x1)^2 / 2
    # node 0: mean 0.4, squares 0.02 (1 dof); node 1: mean 0.2, squares 0.08 (2 dof); single runs add nothing
    assert pooled_variance({0: [0.5, 0.3], 1: [0.0, 0.2, 0.4], 2: [0.9]}) == pytest.approx(0.1 / 3)
    assert pooled_variance({0: [0.7, 0.7, 0.7]}) == 0.0


def test_the_reserve_is_a_twentieth_of_the_budget_and_at_least_two() -> None:
    assert remeasure_reserve(200) == 10 and remeasure_reserve(60) == 3 and remeasure_reserve(10) == 2


def test_a_lucky_single_run_is_measured_again_before_a_proven_node() -> None:
    runs = {0: [0.80, 0.82, 0.78, 0.80], 5: [0.86], 7: [0.40]}
    assert pick_repeat(runs, 0.01) == 5  # 0.86 + 0.1 against 0.80 + 0.05
    # runs in flight count: nine of node 5 give 0.86 + 0.033, under 0.85 + 0.05 for node 0
    assert pick_repeat({0: [0.85] * 4, 5: [0.86]}, 0.01) == 5
    assert pick_repeat({0: [0.85] * 4, 5: [0.86]}, 0.01, in_flight={5: 8}) == 0
    # node 7 is outside the top 2 means: never picked, however uncertain
    assert pick_repeat({0: [0.8] * 9, 5: [0.7] * 9, 7: [0.4]}, 0.01, top_k=2) in (0, 5)
    assert pick_repeat({}, 0.01) is None


def test_the_final_choice_is_the_best_mean_among_nodes_run_twice() -> None:
    runs = {0: [0.80, 0.78, 0.82, 0.80], 3: [0.95], 4: [0.86, 0.84], 5: [0.90, 0.70]}
    choice = remeasured_final(runs, 0.01)
    assert choice is not None and choice.node_id == 4  # 0.95 is one run: not chosen on it alone
    assert choice.detail["runs"] == 2 and choice.detail["remeasured"] == 3 and choice.detail["mean"] == 0.85
    assert "re-measured" in choice.rule
    assert remeasured_final({0: [0.8, 0.8], 2: [0.8, 0.8]}, 0.01).node_id == 0  # ties: the older node
    assert remeasured_final({0: [0.5], 1: [0.7]}, 0.01).node_id == 1  # nobody run twice: every node
    assert remeasured_final({}, 0.01) is None
