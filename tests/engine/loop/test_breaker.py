"""The circuit breaker's two rules, on a clock the test moves."""

from __future__ import annotations

from engine.loop.breaker import CircuitBreaker


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_failed_expansions_in_a_row_trip_and_anything_else_resets():
    breaker = CircuitBreaker(max_failed_expansions=3, max_failing_s=60, clock=Clock())
    for status in ("failed", "failed", "invalid", "failed", "failed"):
        breaker.expansion(status, f"reason {status}")
        assert breaker.tripped() is None
    breaker.expansion("failed", "MutationError: no usable answer")
    why = breaker.tripped()
    assert why and "3 expansions in a row made no usable child" in why and "MutationError: no usable answer" in why


def test_for_a_model_invalid_children_count_too():
    breaker = CircuitBreaker(max_failed_expansions=3, unusable=("failed", "invalid"), clock=Clock())
    for status in ("invalid", "failed", "valid", "invalid", "invalid"):
        breaker.expansion(status, "SyntaxError: invalid syntax (line 3)")
        assert breaker.tripped() is None
    breaker.expansion("invalid", "duplicate of node 4")
    assert "made no usable child (failed or invalid" in breaker.tripped()


def test_calls_failing_for_the_limit_trip_counted_from_the_first_failure():
    clock = Clock()
    breaker = CircuitBreaker(max_failed_expansions=8, max_failing_s=60, clock=clock)
    clock.now += 500  # a long quiet spell (the seed's evaluations) is not failure
    assert breaker.tripped() is None and breaker.seconds_left() is None
    breaker.call(False, "InternalServerError: boom")
    assert breaker.tripped() is None and breaker.seconds_left() == 60
    clock.now += 59
    breaker.call(False, "InternalServerError: boom again")
    assert breaker.tripped() is None and breaker.seconds_left() == 1
    clock.now += 1
    why = breaker.tripped()
    assert why and "failed for 60 s" in why and "2 failed" in why and "boom again" in why


def test_a_success_resets_the_failing_clock():
    clock = Clock()
    breaker = CircuitBreaker(max_failing_s=60, clock=clock)
    breaker.call(False, "Timeout")
    clock.now += 50
    breaker.call(True, None)
    clock.now += 50
    assert breaker.tripped() is None and breaker.seconds_left() is None
    breaker.call(False, "Timeout")
    clock.now += 59
    assert breaker.tripped() is None
    clock.now += 1
    assert breaker.tripped()
