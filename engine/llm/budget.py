"""The spend budget (dollars and tokens) and how calls in flight are counted against it.

The rule, sequentially: a paid call is made while the spend is below the
budget; the call that crosses it is the last one. So $0.50 at $0.10 a call
makes five calls, and the sixth raises BudgetExceeded.

With several calls in flight at once (asyncio), each admitted call holds a
reservation until it settles: an estimate of what it will cost, the largest
cost (and the largest token count) of a settled, successful call of the same
model so far, this run and before a resume. A call is admitted when

    spent + sum of the reservations in flight < budget   (for dollars and for tokens)

that is, when the sequential rule would admit it if every call in flight had
already returned at its estimate. A call that does not fit waits (it is not
refused) until a call in flight settles, then asks again; it is refused only
when the settled spend alone has reached the budget. A model with no settled
call has no estimate: its call is admitted like any other, but while it is in
flight nothing else is admitted, so the first call of a model (or of a run)
teaches the estimate before concurrency resumes. With calls of equal cost the
concurrent count equals the sequential one: never a sixth call at $0.50. With
calls of unequal cost the overshoot is bounded by the estimate's error on the
calls in flight; waiting callers see the real spend before they go.

Dollar comparisons allow 1e-9 USD for float rounding (0.1 * 5 may sum to
0.49999999999999994). A call of unknown price counts 0 dollars and its tokens.
Answers from the archive (cached) never pass through the budget.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

EPS_USD = 1e-9


@dataclass(frozen=True)
class Reservation:
    model: str
    cost_usd: float | None  # None: this model has no settled call yet
    tokens: int | None


class Budget:
    def __init__(
        self,
        max_cost_usd: float | None = None,
        max_tokens_total: int | None = None,
        *,
        spent_usd: float = 0.0,
        spent_tokens: int = 0,
        estimates: dict[str, tuple[float, int]] | None = None,
    ) -> None:
        self.max_cost_usd = max_cost_usd
        self.max_tokens_total = max_tokens_total
        self.spent_usd = float(spent_usd)
        self.spent_tokens = int(spent_tokens)
        self._estimates = dict(estimates or {})  # model -> (largest cost, largest tokens) of a successful call
        self._in_flight: list[Reservation] = []
        self._changed: asyncio.Event | None = None

    @classmethod
    def from_archive(cls, archive, max_cost_usd: float | None, max_tokens_total: int | None) -> Budget:
        cost, tokens_in, tokens_out, _ = archive.llm_spend()
        return cls(
            max_cost_usd,
            max_tokens_total,
            spent_usd=cost,
            spent_tokens=tokens_in + tokens_out,
            estimates=archive.largest_successful_call_by_model(),
        )

    @property
    def limited(self) -> bool:
        return self.max_cost_usd is not None or self.max_tokens_total is not None

    @property
    def in_flight(self) -> int:
        return len(self._in_flight)

    def exceeded(self) -> str | None:
        """Why no new paid call may start (one line), or None."""
        if self.max_cost_usd is not None and self.spent_usd >= self.max_cost_usd - EPS_USD:
            return (
                f"LLM budget reached: ${self.spent_usd:.4f} spent of ${self.max_cost_usd:.4f} "
                "(max cost); no new paid call is made"
            )
        if self.max_tokens_total is not None and self.spent_tokens >= self.max_tokens_total:
            return (
                f"LLM budget reached: {self.spent_tokens} tokens used of {self.max_tokens_total} "
                "(max tokens); no new paid call is made"
            )
        return None

    def _fits(self) -> bool:
        if not self._in_flight:
            return True
        if any(r.cost_usd is None for r in self._in_flight):
            return False
        if self.max_cost_usd is not None:
            reserved = sum(r.cost_usd or 0.0 for r in self._in_flight)
            if self.spent_usd + reserved >= self.max_cost_usd - EPS_USD:
                return False
        if self.max_tokens_total is not None:
            reserved_tokens = sum(r.tokens or 0 for r in self._in_flight)
            if self.spent_tokens + reserved_tokens >= self.max_tokens_total:
                return False
        return True

    async def admit(self, model: str) -> Reservation:
        """Wait until a call of `model` may start and reserve its estimate; BudgetExceeded when spent."""
        from engine.llm.errors import BudgetExceeded

        while True:
            reason = self.exceeded()
            if reason is not None:
                raise BudgetExceeded(reason)
            if not self.limited or self._fits():
                estimate = self._estimates.get(model)
                reservation = Reservation(model, *(estimate if estimate is not None else (None, None)))
                self._in_flight.append(reservation)
                return reservation
            if self._changed is None:
                self._changed = asyncio.Event()
            await self._changed.wait()

    def charge(self, cost_usd: float | None, tokens: int) -> None:
        """A row was written: its spend is settled."""
        self.spent_usd += cost_usd or 0.0
        self.spent_tokens += int(tokens)

    def release(self, reservation: Reservation, observed: tuple[float | None, int] | None = None) -> None:
        """The reserved call is over (charged already); `observed` (cost, tokens) of a successful answer
        updates the model's estimate. Wakes the calls waiting for room."""
        self._in_flight.remove(reservation)
        if observed is not None:
            cost, tokens = observed
            old_cost, old_tokens = self._estimates.get(reservation.model, (0.0, 0))
            self._estimates[reservation.model] = (max(old_cost, cost or 0.0), max(old_tokens, int(tokens)))
        if self._changed is not None:
            self._changed.set()
            self._changed = None
