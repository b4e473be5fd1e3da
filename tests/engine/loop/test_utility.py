"""SICA's utility on figures worked out by hand, and how --utility reads."""

from __future__ import annotations

import pytest

from engine.loop.evaluation import Outcome
from engine.loop.utility import Utility, scored


def test_sica_defaults_on_figures_worked_by_hand():
    u = Utility()  # 0.5 score, 0.25 cost ($10 cap), 0.25 time (300 s cap), halved on a timeout
    # score 0.8, $2.50 of 10, 60 s of 300: 0.5*0.8 + 0.25*(1-0.25) + 0.25*(1-0.2) = 0.4 + 0.1875 + 0.2
    assert u.value(0.8, 2.5, 60.0, False) == pytest.approx(0.7875)
    # over both caps: only the score counts
    assert u.value(1.0, 25.0, 900.0, False) == pytest.approx(0.5)
    # free and instant but wrong: the cost and time terms alone
    assert u.value(0.0, 0.0, 0.0, False) == pytest.approx(0.5)
    # the same figures, timed out: halved
    assert u.value(0.8, 2.5, 60.0, True) == pytest.approx(0.39375)


def test_weights_and_caps_from_the_command_line():
    u = Utility.parse("score=0.6, time=0.4", cost_cap=None, time_cap=100.0)
    assert (u.w_score, u.w_cost, u.w_time, u.time_cap, u.cost_cap) == (0.6, 0.0, 0.4, 100.0, 10.0)
    # 0.6*0.5 + 0.4*(1 - 25/100) = 0.3 + 0.3
    assert u.value(0.5, 123.0, 25.0, False) == pytest.approx(0.6)
    for bad, why in (
        ("score=0.5,cost=0.25", "sum to 1"),
        ("speed=1", "terms"),
        ("score=x", "not a number"),
        ("score=1.5,cost=-0.5", "between 0 and 1"),
    ):
        with pytest.raises(ValueError, match=why):
            Utility.parse(bad)
    with pytest.raises(ValueError, match="--cost-cap must be a positive"):
        Utility.parse("score=1", cost_cap=0.0)


def test_the_figures_are_kept_beside_the_task_metrics():
    outcome = Outcome("timeout", {"resolved": 0}, runtime_s=400.0, llm_cost_usd=1.0)
    score, metrics = scored(Utility(), 0.0, outcome)
    # 0 + 0.25*(1-0.1) + 0 = 0.225, halved = 0.1125
    assert score == pytest.approx(0.1125)
    assert metrics == {
        "resolved": 0,
        "task_score": 0.0,
        "cost_usd": 1.0,
        "time_s": 400.0,
        "timed_out": True,
        "utility": pytest.approx(0.1125),
    }
    assert scored(None, 0.7, outcome) == (0.7, {"resolved": 0})
