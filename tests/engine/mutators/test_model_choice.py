"""Model ensembles: fixed weights and ShinkaEvolve's asymmetric UCB bandit."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.errors import UserError
from engine.mutators.model_choice import AsymmetricUCB, FixedWeights, make_chooser, parse_models


def test_parse_models():
    assert parse_models("a,b@2, c@0.5") == [("a", 1.0), ("b", 2.0), ("c", 0.5)]
    for bad in ("", "a@x", "a@-1", "@2"):
        with pytest.raises(UserError):
            parse_models(bad)


def test_fixed_weights_follow_the_weights():
    chooser = FixedWeights([("a", 3.0), ("b", 1.0)])
    rng = np.random.default_rng(0)
    picks = [chooser.pick(rng) for _ in range(4000)]
    assert abs(picks.count("a") / 4000 - 0.75) < 0.03


def test_bandit_tries_each_model_then_follows_the_asymmetric_ucb_formula():
    bandit = make_chooser("a,b", "bandit")
    assert isinstance(bandit, AsymmetricUCB)
    rng = np.random.default_rng(0)
    first = {
        bandit.pick(rng),
    }
    bandit.credit(first.pop(), 0.0)
    second = bandit.pick(rng)
    assert second in ("a", "b") and bandit.pulls.get(second, 0) == 0  # the untried one
    bandit.pulls, bandit.reward = {"a": 4, "b": 1}, {"a": 0.8, "b": 0.0}
    total = 5
    ucb_a = 0.8 / 4 + math.sqrt(2 * math.log(total) / 4)
    ucb_b = 0.0 + math.sqrt(2 * math.log(total) / 1)
    assert bandit.pick(rng) == ("a" if ucb_a > ucb_b else "b")


def test_a_worse_child_is_not_a_negative_reward():
    bandit = AsymmetricUCB(["a"])
    bandit.credit("a", -0.4)
    assert bandit.reward["a"] == 0.0 and bandit.pulls["a"] == 1
    bandit.credit("a", 0.3)
    assert bandit.reward["a"] == pytest.approx(0.3)
