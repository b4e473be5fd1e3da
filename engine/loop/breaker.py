"""The circuit breaker: a run whose model keeps failing stops instead of looping.

A failed expansion spends no evaluation budget, so a run whose every
expansion fails (a key that stopped working, a server answering 500, a model
that never follows the answer format) would otherwise go on until its time
limit, or for ever. Two lasting failures trip the breaker:

- `max_failed_expansions` expansions in a row made no usable child: they
  ended `failed` (the mutator raised: malformed answers, edits that never
  applied, calls that failed after their retries) or, for a model, `invalid`
  too (code that does not compile, a duplicate: a weak model's whole-file
  answers often are); a valid child resets the count. The offline mutator's
  invalid children are routine and free, so only its failures count;
- model calls have been failing for `max_failing_s` seconds: counted from the
  first failure after the last success, with no success since (a server that
  hangs is caught too: the loop looks at this clock while calls wait).

The run then stops as an interruption (what is in flight is stored or
abandoned as on Ctrl-C), says the last error, and can be resumed once the
cause is fixed. The breaker holds only live counters: a resumed run starts
them afresh.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from engine.words import plural

DEFAULT_MAX_FAILED_EXPANSIONS = 8
DEFAULT_MAX_FAILING_S = 300.0


class CircuitBreaker:
    def __init__(
        self,
        max_failed_expansions: int = DEFAULT_MAX_FAILED_EXPANSIONS,
        max_failing_s: float = DEFAULT_MAX_FAILING_S,
        clock: Callable[[], float] = time.monotonic,
        unusable: tuple[str, ...] = ("failed",),
    ) -> None:
        """`unusable`: the child statuses that count as a failed expansion (a model's runs add "invalid")."""
        self.max_failed_expansions = max_failed_expansions
        self.unusable = unusable
        self.max_failing_s = max_failing_s
        self._clock = clock
        self._failed_in_row = 0
        self._failing_since: float | None = None  # the first failure after the last success
        self._failures_since_ok = 0
        self.last_error = ""

    def expansion(self, status: str, reason: str) -> None:
        if status in self.unusable:
            self._failed_in_row += 1
            self.last_error = reason or self.last_error
        else:
            self._failed_in_row = 0

    def call(self, ok: bool, error: str | None) -> None:
        if ok:
            self._failing_since = None
            self._failures_since_ok = 0
        else:
            if self._failing_since is None:
                self._failing_since = self._clock()
            self._failures_since_ok += 1
            self.last_error = error or self.last_error

    def tripped(self) -> str | None:
        """Why the run must stop now (one line), or None."""
        if self._failed_in_row >= self.max_failed_expansions:
            what = " or ".join(self.unusable)
            return (
                f"{plural(self._failed_in_row, 'expansion')} in a row made no "
                f"usable child ({what}; the limit is --max-failed-expansions {self.max_failed_expansions}); "
                f"the last: {self.last_error}"
            )
        if self._failing_since is not None and self._clock() - self._failing_since >= self.max_failing_s:
            return (
                f"model calls have failed for {self._clock() - self._failing_since:.0f} s with no success "
                f"({self._failures_since_ok} failed; the limit is --max-failing-time {self.max_failing_s:g}); "
                f"the last: {self.last_error}"
            )
        return None

    def seconds_left(self) -> float | None:
        """How long until the time rule could trip (None when no call is failing): the loop wakes up then."""
        if self._failing_since is None:
            return None
        return max(0.0, self.max_failing_s - (self._clock() - self._failing_since))
