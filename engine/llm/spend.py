"""What the LLM calls of a run have cost: dollars, tokens and calls, in total, per purpose and per model.

A tally starts from the archive's `llm_calls` rows (so a resumed run counts
what was spent before it was stopped) and adds each new row as it is written.
`calls` counts rows, failed attempts included (they are rows too); answers
served from the archive are counted apart, in `cached`, and cost nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from archive.records import LLMCallRecord


@dataclass(frozen=True)
class SpendLine:
    cost_usd: float = 0.0  # sum over priced calls; calls of unknown price add tokens only
    tokens_in: int = 0
    tokens_out: int = 0
    calls: int = 0  # rows: successful calls and failed attempts
    failed: int = 0

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out

    def plus(
        self, cost_usd: float | None, tokens_in: int, tokens_out: int, calls: int = 1, failed: int = 0
    ) -> SpendLine:
        return SpendLine(
            self.cost_usd + (cost_usd or 0.0),
            self.tokens_in + tokens_in,
            self.tokens_out + tokens_out,
            self.calls + calls,
            self.failed + failed,
        )


@dataclass(frozen=True)
class Spend:
    """A snapshot of the spend, for budgets and the run's summary."""

    total: SpendLine = SpendLine()
    by_purpose: Mapping[str, SpendLine] = field(default_factory=dict)
    by_model: Mapping[str, SpendLine] = field(default_factory=dict)
    cached: int = 0  # answers this client served from the archive (no spend)

    @property
    def cost_usd(self) -> float:
        return self.total.cost_usd

    @property
    def tokens_in(self) -> int:
        return self.total.tokens_in

    @property
    def tokens_out(self) -> int:
        return self.total.tokens_out

    @property
    def tokens(self) -> int:
        return self.total.tokens

    @property
    def calls(self) -> int:
        return self.total.calls


class SpendTally:
    """The live spend of one client (the only writer of llm_calls)."""

    def __init__(self, spend: Spend | None = None) -> None:
        spend = spend or Spend()
        self._total = spend.total
        self._purpose = dict(spend.by_purpose)
        self._model = dict(spend.by_model)
        self._cached = spend.cached

    @classmethod
    def from_archive(cls, archive) -> SpendTally:
        cost, tokens_in, tokens_out, calls = archive.llm_spend()
        rows = archive.llm_spend_by_purpose_and_model()
        by_purpose: dict[str, SpendLine] = {}
        by_model: dict[str, SpendLine] = {}
        failed = 0
        for purpose, model, c, ti, to, n, nf in rows:
            for table, name in ((by_purpose, purpose), (by_model, model)):
                table[name] = table.get(name, SpendLine()).plus(float(c), int(ti), int(to), int(n), int(nf))
            failed += int(nf)
        total = SpendLine(float(cost), int(tokens_in), int(tokens_out), int(calls), failed)
        return cls(Spend(total, by_purpose, by_model))

    def add(self, call: LLMCallRecord) -> None:
        failed = int(call.error is not None)
        self._total = self._total.plus(call.cost_usd, call.tokens_in, call.tokens_out, 1, failed)
        for table, name in ((self._purpose, call.purpose), (self._model, call.model)):
            table[name] = table.get(name, SpendLine()).plus(call.cost_usd, call.tokens_in, call.tokens_out, 1, failed)

    def add_cached(self) -> None:
        self._cached += 1

    @property
    def total(self) -> SpendLine:
        return self._total

    def snapshot(self) -> Spend:
        return Spend(
            self._total, MappingProxyType(dict(self._purpose)), MappingProxyType(dict(self._model)), self._cached
        )
