"""Operator credit counts every failed evaluation as a miss, whatever its score."""

from __future__ import annotations

import pytest

from engine.loop.credit import OperatorCredit


@pytest.mark.parametrize(("score", "ok", "better"), [(0.0, True, 1.0), (0.0, False, 0.0), (-3.0, True, 0.0)])
def test_a_failure_is_a_miss_even_when_its_score_beats_the_parent(score: float, ok: bool, better: float) -> None:
    credit = OperatorCredit()
    credit.child_stored(1, 0, "insert diff bins - item; count 50->100", valid=True)
    credit.evaluated(1, score, parent_mean=-1.0, ok=ok)  # a parent below 0: an error's 0 would beat it
    assert credit.as_mapping() == {"insert": (better, 1.0), "count": (better, 1.0)}


def test_an_invalid_child_is_a_miss_at_once() -> None:
    credit = OperatorCredit()
    credit.child_stored(1, 0, "swap_op +->-", valid=False)
    assert credit.as_mapping() == {"swap_op": (0.0, 1.0)}
