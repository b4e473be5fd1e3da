"""Questions about the model calls (table llm_calls): the replay cache, spend, and expansion keys.

Two lookups answer "what did the model say to this caller's key?", with two rules on purpose:
- `llm_answer_for_key` (a replay, `--replay`, whose request hash missed): the answer only when every
  successful call under the key said the same text. A replay reads another run's archive, where a key
  may have been asked more than once (a coding agent's k-th gateway call on an instance that was
  evaluated again); when the answers differ, the replay cannot know which one the original used, and
  must stop as diverged rather than guess.
- `first_llm_answer_for_key` (a resumed run adopting an expansion its crash interrupted): the earliest
  successful call under the key in the run's own archive. Expansion keys are unique in the run that
  made them, so there is one; if there ever were several, the run already paid for the first, and a
  resume must never pay again for a call that returned.

Expansion keys are `parent P child K` followed by what the call was (` attempt 0`, ` diagnose`): the
key convention the LLM mutator writes into each request and its `expand` event.
"""

from __future__ import annotations

import json
from datetime import datetime

from archive.reader import Reader
from archive.records import LLMCallRecord, LLMTotals

_CALL_COLUMNS = (
    "id, node_id, purpose, model, request_hash, request, response, tokens_in, tokens_out, cost_usd, latency_s, error"
)


def _call(row: tuple) -> LLMCallRecord:
    n, node, purpose, model, request_hash, request, response, tokens_in, tokens_out, cost, latency, error = row
    answer = json.loads(response) if response else None
    return LLMCallRecord(
        n, node, purpose, model, request_hash, json.loads(request), answer, tokens_in, tokens_out, cost, latency, error
    )


class LLMReads(Reader):
    # ----- the replay cache ------------------------------------------------------------------
    def next_llm_call_id(self) -> int:
        """The id the next stored call takes."""
        return int(self._value("SELECT coalesce(max(id), -1) + 1 FROM llm_calls"))

    def llm_answer(self, request_hash: str) -> LLMCallRecord | None:
        """The first successful call with this request hash (the replay cache), or None."""
        row = self._row(
            f"SELECT {_CALL_COLUMNS} FROM llm_calls WHERE request_hash = ? AND error IS NULL ORDER BY id LIMIT 1",
            [request_hash],
        )
        return None if row is None else _call(row)

    def _answers_for_key(self, key: str, first_only: bool) -> list[tuple]:
        limit = " LIMIT 1" if first_only else ""
        return self._rows(
            f"SELECT {_CALL_COLUMNS} FROM llm_calls WHERE request->>'key' = ? AND error IS NULL ORDER BY id{limit}",
            [key],
        )

    def llm_answer_for_key(self, key: str) -> LLMCallRecord | None:
        """A replay's answer by its caller's key (e.g. "parent 3 child 2 attempt 0"): the first successful call
        under it when every successful call under it got the same answer text; None when there is none, or
        several differ (the module's docstring says why)."""
        rows = self._answers_for_key(key, first_only=False)
        texts = {json.loads(r[6]).get("text") if r[6] else None for r in rows}
        return _call(rows[0]) if len(texts) == 1 else None

    def first_llm_answer_for_key(self, key: str) -> LLMCallRecord | None:
        """A resumed expansion's answer by its key: the earliest successful call under it, or None (the
        module's docstring says why it need not agree with later ones)."""
        rows = self._answers_for_key(key, first_only=True)
        return _call(rows[0]) if rows else None

    def successful_llm_calls(self) -> list[LLMCallRecord]:
        """Every call that returned an answer, in id order."""
        return [_call(r) for r in self._rows(f"SELECT {_CALL_COLUMNS} FROM llm_calls WHERE error IS NULL ORDER BY id")]

    # ----- spend -------------------------------------------------------------------------------
    def llm_spend(self) -> tuple[float, int, int, int]:
        """(dollars, tokens in, tokens out, calls) spent so far."""
        row = self._row(
            "SELECT coalesce(sum(cost_usd), 0), coalesce(sum(tokens_in), 0), coalesce(sum(tokens_out), 0), "
            "count(*) FROM llm_calls"
        )
        assert row is not None  # an aggregate always has its row
        return float(row[0]), int(row[1]), int(row[2]), int(row[3])

    def llm_totals(self) -> LLMTotals:
        """Every call summed: dollars, tokens, calls, failed calls, and successful calls with no price."""
        row = self._row(
            "SELECT coalesce(sum(cost_usd), 0), coalesce(sum(tokens_in), 0), coalesce(sum(tokens_out), 0), "
            "count(*), count(error), count(*) FILTER (WHERE cost_usd IS NULL AND error IS NULL) FROM llm_calls"
        )
        assert row is not None
        return LLMTotals(float(row[0]), int(row[1]), int(row[2]), int(row[3]), int(row[4]), int(row[5]))

    def llm_spend_by_purpose_and_model(self) -> list[tuple[str, str, float, int, int, int, int]]:
        """(purpose, model, dollars, tokens in, tokens out, calls, failed calls) per pair ('' for none), in order."""
        return self._rows(
            "SELECT coalesce(purpose, ''), coalesce(model, ''), coalesce(sum(cost_usd), 0), "
            "coalesce(sum(tokens_in), 0), coalesce(sum(tokens_out), 0), count(*), count(error) "
            "FROM llm_calls GROUP BY 1, 2 ORDER BY 1, 2"
        )

    def llm_spend_by_purpose(self) -> list[tuple[str, int, int, int, int, float, int]]:
        """(purpose or '-', calls, failed, tokens in, tokens out, dollars, unpriced successful calls) per purpose."""
        return self._rows(
            "SELECT coalesce(purpose, '-'), count(*), count(error), coalesce(sum(tokens_in), 0), "
            "coalesce(sum(tokens_out), 0), coalesce(sum(cost_usd), 0), "
            "count(*) FILTER (WHERE cost_usd IS NULL AND error IS NULL) FROM llm_calls GROUP BY ALL ORDER BY 1"
        )

    def largest_successful_call_by_model(self) -> dict[str, tuple[float, int]]:
        """{model: (largest dollars, largest tokens in + out) of one successful call}: what a budget reserves."""
        rows = self._rows(
            "SELECT model, coalesce(max(cost_usd), 0), coalesce(max(tokens_in + tokens_out), 0) "
            "FROM llm_calls WHERE error IS NULL GROUP BY model"
        )
        return {str(m): (float(c), int(t)) for m, c, t in rows}

    def llm_call_count(self, purpose: str) -> int:
        """How many calls (failed ones included) were made for a purpose."""
        return int(self._value("SELECT count(*) FROM llm_calls WHERE purpose = ?", [purpose]))

    def llm_cost_timeline(self) -> list[tuple[datetime, float]]:
        """(created_at, dollars or 0) of every call with a time, in time order."""
        return self._rows(
            "SELECT created_at, coalesce(cost_usd, 0) FROM llm_calls WHERE created_at IS NOT NULL ORDER BY created_at"
        )

    # ----- expansion keys ----------------------------------------------------------------------
    def expansions_asked(self, parent: int) -> int:
        """How many expansions of `parent` made a call (distinct `parent P child K` keys, failed calls included)."""
        return int(
            self._value(
                "SELECT count(DISTINCT regexp_extract(request->>'key', '^parent \\d+ child \\d+')) FROM llm_calls "
                "WHERE starts_with(request->>'key', ?)",
                [f"parent {parent} child "],
            )
        )

    def unstored_expansions(self) -> list[tuple[int, str]]:
        """(parent, `parent P child K`) of expansions with a successful call but no `expand` event (the run
        stopped before storing their child), oldest first."""
        rows = self._rows(
            "WITH asked AS (SELECT regexp_extract(request->>'key', '^parent (\\d+) child \\d+', 1) AS parent, "
            "regexp_extract(request->>'key', '^parent \\d+ child \\d+') AS key, min(id) AS first "
            "FROM llm_calls WHERE error IS NULL GROUP BY ALL), "
            "stored AS (SELECT DISTINCT detail->>'key' AS key FROM events WHERE kind = 'expand') "
            "SELECT parent, key FROM asked WHERE key <> '' AND key NOT IN (SELECT key FROM stored "
            "WHERE key IS NOT NULL) "
            "ORDER BY first"
        )
        return [(int(parent), key) for parent, key in rows]

    def first_model_under_key(self, key: str) -> str | None:
        """The model of the first call whose key begins with `key` and a space (an expansion's calls)."""
        row = self._row(
            "SELECT model FROM llm_calls WHERE starts_with(request->>'key', ?) ORDER BY id LIMIT 1", [f"{key} "]
        )
        return None if row is None else row[0]
