"""The sweep's statistics on hand-made numbers (engine/sweep/stats.py) and its curves' arithmetic
(engine/sweep/curves.py): figures checked by hand, against scipy, and at their edges."""

from __future__ import annotations

import numpy as np
import pytest

from engine.errors import UserError
from engine.sweep import curves, stats
from engine.sweep.stats import Difference, Estimate, Outcome

# ----- the mean and its interval ---------------------------------------------------------------------------


def test_no_value_one_value_and_equal_values():
    assert stats.mean_interval([]) == Estimate(None, None, None, 0)
    one = stats.mean_interval([0.7])
    assert one == Estimate(0.7, None, None, 1) and not one.has_interval  # one seed: no interval, said so
    same = stats.mean_interval([0.4, 0.4, 0.4, 0.4])
    assert same == Estimate(0.4, 0.4, 0.4, 4)  # every resample's mean is that value


def test_two_values_by_hand():
    """Resampling [0, 1] gives means 0, 0.5, 1 with chances 1/4, 1/2, 1/4: the 2.5th and 97.5th percentiles are
    0 and 1."""
    e = stats.mean_interval([0.0, 1.0])
    assert e.mean == 0.5 and (e.low, e.high) == (0.0, 1.0)


def test_the_interval_is_scipys_percentile_interval_and_the_same_every_time():
    from scipy.stats import bootstrap

    values = [0.61, 0.55, 0.72, 0.58, 0.66, 0.49, 0.7]
    e = stats.mean_interval(values)
    again = stats.mean_interval(values)
    assert e == again  # a fixed seed: the same sweep prints the same table
    direct = bootstrap(
        (np.array(values),), np.mean, method="percentile", rng=np.random.default_rng(stats.BOOTSTRAP_SEED)
    ).confidence_interval
    assert e.low == pytest.approx(direct.low) and e.high == pytest.approx(direct.high)
    assert e.mean == pytest.approx(np.mean(values))
    assert e.low < e.mean < e.high


def test_a_large_sample_agrees_with_the_normal_interval():
    values = np.random.default_rng(5).normal(0.5, 0.1, size=400)
    e = stats.mean_interval(list(values))
    half = 1.96 * values.std(ddof=1) / np.sqrt(len(values))
    assert e.low == pytest.approx(values.mean() - half, abs=0.15 * half)
    assert e.high == pytest.approx(values.mean() + half, abs=0.15 * half)


# ----- seeds won, the group table -------------------------------------------------------------------------


def test_seeds_won_counts_ties_for_each_and_only_contested_seeds():
    scores = {
        "hgm": {0: 0.5, 1: 0.7, 2: 0.6, 3: 0.9},
        "dgm": {0: 0.5, 1: 0.6, 2: 0.8},  # seed 3 not done: hgm alone there, not a contest
        "greedy": {0: 0.4, 1: 0.7, 2: 0.1},
    }
    assert stats.seeds_won(scores) == {"hgm": (2, 3), "dgm": (2, 3), "greedy": (1, 3)}
    assert stats.seeds_won({"all": {0: 0.5, 1: 0.6}}) == {"all": (0, 0)}


def test_group_table_uses_done_cells_and_says_what_is_missing():
    outcomes = [
        Outcome("hgm", 0, 0.6, dollars=0.2, wall_s=10.0, raw=5.0),
        Outcome("hgm", 1, 0.8, dollars=0.4, wall_s=14.0, raw=3.0),
        Outcome("hgm", 2, None, dollars=0.3, wall_s=12.0),  # done, but no final node to measure
        Outcome("dgm", 0, 0.7, dollars=1.0, wall_s=20.0),
    ]
    hgm, dgm, greedy = stats.group_table(outcomes, {"hgm": 3, "dgm": 3, "greedy": 3})
    assert (hgm.done, hgm.cells, hgm.score.n, hgm.score.mean) == (3, 3, 2, pytest.approx(0.7))
    assert hgm.dollars == pytest.approx(0.3) and hgm.wall_s == pytest.approx(12.0) and hgm.raw == pytest.approx(4.0)
    assert (hgm.seeds_won, dgm.seeds_won) == ("0/1", "1/1")
    assert dgm.score == Estimate(0.7, None, None, 1) and dgm.raw is None
    assert (greedy.done, greedy.score.mean, greedy.dollars, greedy.seeds_won) == (0, None, None, "-")


# ----- paired differences and their sentences ----------------------------------------------------------------


def test_the_four_sentences_exactly():
    def said(mean, low, high, n):
        return Difference("dgm", "hgm", Estimate(mean, low, high, n)).sentence

    assert said(0.012, 0.004, 0.020, 10) == "dgm above hgm by 0.012 [0.004, 0.020] over 10 seeds"
    assert said(-0.012, -0.020, -0.004, 10) == "dgm below hgm by 0.012 [-0.020, -0.004] over 10 seeds"
    assert said(0.003, -0.004, 0.010, 10) == (
        "dgm and hgm: no difference beyond noise (dgm - hgm = 0.003 [-0.004, 0.010] over 10 seeds)"
    )
    assert said(0.05, None, None, 1) == "dgm and hgm: too few seeds to tell (1 paired)"
    assert said(None, None, None, 0) == "dgm and hgm: too few seeds to tell (0 paired)"
    assert said(0.0, 0.0, 0.0, 4).startswith("dgm and hgm: no difference beyond noise")  # zero is not above zero
    # figures too small for three decimals keep two significant digits
    assert said(0.0004, 0.0002, 0.0007, 5) == "dgm above hgm by 0.00040 [0.00020, 0.00070] over 5 seeds"


def test_differences_pair_cells_by_seed():
    outcomes = [
        *(Outcome("hgm", s, x) for s, x in enumerate([0.50, 0.60, 0.55, 0.40])),
        *(Outcome("dgm", s, x) for s, x in enumerate([0.52, 0.63, 0.58])),  # seed 3 not done
        Outcome("greedy", 0, 0.3),
    ]
    dgm, greedy = stats.paired_differences(outcomes, ["hgm", "dgm", "greedy"], "hgm")
    assert (dgm.group, dgm.baseline, dgm.paired) == ("dgm", "hgm", 3)
    assert dgm.estimate.mean == pytest.approx((0.02 + 0.03 + 0.03) / 3)  # by seed, not the groups' means
    assert (
        dgm.verdict == "above" and dgm.estimate.low == pytest.approx(0.02) and dgm.estimate.high == pytest.approx(0.03)
    )
    assert greedy.paired == 1 and greedy.verdict == "too few seeds"
    worse = stats.paired_differences(outcomes, ["hgm", "dgm"], "dgm")
    assert [d.group for d in worse] == ["hgm"] and worse[0].verdict == "below"
    assert worse[0].sentence.startswith("hgm below dgm by 0.027 [-0.030, -0.020]")


def test_a_shift_lost_in_noise_is_no_difference():
    base = [0.5, 0.7, 0.4, 0.8, 0.6]
    other = [0.55, 0.6, 0.45, 0.75, 0.62]
    outcomes = [Outcome("a", s, x) for s, x in enumerate(base)] + [Outcome("b", s, x) for s, x in enumerate(other)]
    (d,) = stats.paired_differences(outcomes, ["a", "b"], "a")
    assert d.verdict == "no difference" and d.estimate.low < 0 < d.estimate.high
    assert "no difference beyond noise (b - a = " in d.sentence and d.sentence.endswith("over 5 seeds)")


def test_choose_baseline():
    groups = ["hgm", "dgm", "greedy"]
    assert stats.choose_baseline(groups, None) == "hgm"
    assert stats.choose_baseline(groups, None, "dgm") == "dgm"
    assert stats.choose_baseline(groups, None, "gone") == "hgm"  # the sweep's own, no longer a group
    assert stats.choose_baseline(groups, "greedy", "dgm") == "greedy"
    with pytest.raises(UserError, match=r"no group 'gredy' in this sweep \(did you mean 'greedy'\?\); its groups"):
        stats.choose_baseline(groups, "gredy")


def test_decimals():
    assert stats.decimals(0.5, 0.012) == 3
    assert stats.decimals(0.0) == 3
    assert stats.decimals(0.004, -0.0012) == 4
    assert stats.decimals(0.00004) == 6


# ----- the curves' arithmetic ------------------------------------------------------------------------------


def test_value_at_is_a_step_function_held_after_its_end():
    xs, ys = np.array([1.0, 2.0, 3.0]), np.array([np.nan, 0.5, 0.7])
    got = curves.value_at(xs, ys, np.array([0.5, 1.0, 2.5, 3.0, 9.0]))
    np.testing.assert_array_equal(got, [np.nan, np.nan, 0.5, 0.7, 0.7])
    # dollars repeat (evaluations between two model calls): the last evaluation at or before x counts
    np.testing.assert_array_equal(
        curves.value_at(np.array([0.0, 0.1, 0.1, 0.3]), np.array([1, 2, 3, 4.0]), np.array([0.1, 0.2])), [3, 3]
    )
    assert np.isnan(curves.value_at(np.zeros(0), np.zeros(0), np.array([1.0]))).all()


def test_mean_band():
    rows = np.array([[np.nan, 0.5, 0.5, 0.6], [0.4, 0.5, 0.7, 0.8], [0.3, 0.5, 0.6, 1.0]])
    mean, low, high = curves.mean_band(rows)
    assert np.isnan(mean[0]) and np.isnan(low[0])  # a point some cell has no value at
    np.testing.assert_allclose(mean[1:], [0.5, 0.6, 0.8])
    assert low[1] == high[1] == 0.5  # equal values: the band is the value
    assert (low[2:] < mean[2:]).all() and (mean[2:] < high[2:]).all()
    assert low[3] >= 0.6 and high[3] <= 1.0  # the mean of resamples stays within the values
    again = curves.mean_band(rows)
    np.testing.assert_array_equal(again[1][1:], low[1:])  # a fixed seed
    single = curves.mean_band(rows[1:2])
    assert np.isnan(single[1]).all() and np.isnan(single[2]).all()  # one cell: no band


def test_group_curves_on_evaluations_and_dollars():
    series = [
        curves.CellSeries("hgm", 0, np.array([np.nan, 0.5, 0.6]), np.array([0.0, 0.1, 0.2])),
        curves.CellSeries("hgm", 1, np.array([np.nan, 0.4, 0.4, 0.8]), np.array([0.0, 0.0, 0.3, 0.4])),
        curves.CellSeries("greedy", 0, np.array([0.5, 0.5]), np.zeros(2)),  # no model: not on the dollar chart
    ]
    hgm, greedy = curves.group_curves(series, ["hgm", "greedy", "dgm"])
    np.testing.assert_array_equal(hgm.x, [1, 2, 3, 4])
    np.testing.assert_allclose(hgm.mean, [np.nan, 0.45, 0.5, 0.7])  # the first cell holds 0.6 after its end
    assert (hgm.cells, greedy.cells) == (2, 1) and np.isnan(greedy.low).all()
    (paid,) = curves.group_curves(series, ["hgm", "greedy"], "dollars")
    assert paid.group == "hgm" and paid.x[0] == 0.0 and paid.x[-1] == pytest.approx(0.4)
    assert paid.mean[-1] == pytest.approx(0.7)
    assert curves.group_curves(series[2:], ["greedy"], "dollars") == []
