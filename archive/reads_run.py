"""Questions about the run as a whole and its events: its wall time, how much it has changed, and counts of
`evaluate` events by the rule that made them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from archive.reader import Reader, marks

# A session begins with a `start` or `resume` event and ends with the last thing it wrote before the next
# one began; a snapshot's `restore` is bookkeeping, not work, so an idle gap before it does not count.
_WALL_SQL = """
WITH sessions AS (
    SELECT "at" AS began, lead("at") OVER (ORDER BY seq) AS next_began FROM events WHERE kind IN ('start', 'resume')),
activity AS (
    SELECT "at" AS t FROM events WHERE kind <> 'restore'
    UNION ALL SELECT finished_at FROM evaluations
    UNION ALL SELECT created_at FROM llm_calls
    UNION ALL SELECT created_at FROM nodes
    UNION ALL SELECT updated_at FROM runs),
spans AS (
    SELECT s.began, max(a.t) AS ended FROM sessions s JOIN activity a
    ON a.t >= s.began AND (s.next_began IS NULL OR a.t < s.next_began) GROUP BY s.began)
SELECT sum(epoch_ms(ended) - epoch_ms(began)) / 1000.0 FROM spans
"""


class RunReads(Reader):
    def wall_seconds(self) -> float | None:
        """The run's wall time: how long the engine was running, summed over its start and every resume
        (not the idle time between them). The one definition `runs show`, `compare` and the report use."""
        value = self._value(_WALL_SQL)
        return None if value is None else float(value)

    def change_stamp(self) -> tuple[int, int, int, int, str]:
        """(nodes, evaluations, model calls, last event, status): differs whenever the run has moved on
        (one small query, for a page that polls)."""
        row = self._row(
            "SELECT (SELECT count(*) FROM nodes), (SELECT count(*) FROM evaluations), "
            "(SELECT count(*) FROM llm_calls), (SELECT coalesce(max(seq), 0) FROM events), "
            "(SELECT status FROM runs LIMIT 1)"
        )
        assert row is not None  # scalar subqueries always give their row
        return row[0], row[1], row[2], row[3], row[4]

    def evaluate_event_counts(self, rules: Sequence[str]) -> tuple[int, int]:
        """(events, distinct nodes) of the `evaluate` events whose rule is one of `rules`."""
        row = self._row(
            "SELECT count(*), count(DISTINCT node_id) FROM events WHERE kind = 'evaluate' "
            f"AND detail->>'rule' IN ({marks(rules)})",
            list(rules),
        )
        assert row is not None
        return int(row[0]), int(row[1])

    def timed_events(self) -> list[tuple[datetime, str, int | None, str | None]]:
        """(at, kind, node, detail JSON) of every event, in sequence order."""
        return self._rows('SELECT "at", kind, node_id, detail FROM events ORDER BY seq')

    def last_stop_reason(self) -> str:
        """Why the run's last session stopped, as its last `stop` event says ("budget spent", "stopped early:
        ..."); '' before any session ended."""
        row = self._row("SELECT detail->>'reason' FROM events WHERE kind = 'stop' ORDER BY seq DESC LIMIT 1")
        return "" if row is None or row[0] is None else str(row[0])
