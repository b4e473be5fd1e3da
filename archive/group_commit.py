"""Group commit: evaluations that arrive together are written in one transaction.

A committed DuckDB transaction costs a WAL write and its sync (1-5 ms on the
machines measured, docs/guide/clusters.md), and a parameterised INSERT costs
about 0.4 ms of statement overhead each; with instant evaluations those two
were nearly all of an engine's time per evaluation. Databases have amortised
the first since the 1980s by group commit (DeWitt et al., "Implementation
techniques for main memory database systems", SIGMOD 1984; Gawlick and Kinkade,
IMS Fast Path, 1985): transactions that finish close together share one log
write. Here the engine buffers the rows of finished evaluations (the
evaluation, its `evaluate` event, its trajectory steps) in memory and writes
them as one transaction, one INSERT per table (each column's values as one
typed list, unnested), once `rows` results are waiting or the oldest has waited
`age_s` seconds. Of the ways to write a group, that one cost the least CPU in
DuckDB 2.0: 0.11 ms per evaluation in groups of 64, against 0.23 for a
multi-row `INSERT ... VALUES`, 1.1 for `executemany` (one INSERT per row) and
2.3 for a transaction each (`scripts/bench_cluster.py`, part c).

Durability stays exact because the commit stream stays a prefix of the write
stream: every other write and every read of the archive (`Archive._con`) first
commits what is buffered, so nothing written later (a node, a model call's
row, a stop event) can be committed before an evaluation written earlier. A
kill -9 loses at most the buffered group, results the engine had not acted on
outside memory; a resume rebuilds its state from the archive and measures
them again, once each.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from archive.errors import rollback

# The bounds. A commit costs C = 1-5 ms (its WAL sync; more on a loaded disk), paid once per group, in the loop.
# With the age bound A, a loop recording r results/s commits at most 1/A times a second, so commits take at most
# C/A of its time: 5-25 % at A = 20 ms, twice that at 10 ms, while what a kill -9 can lose is results no older
# than A (and a resume measures them again), nothing for a run whose evaluations take seconds. The count bound
# keeps one transaction small when results arrive faster than 64 per A (3,200/s and up).
ROWS = 64
AGE_S = 0.020

EVENT_COLUMNS = ("seq", "at", "kind", "node_id", "detail")


class GroupCommit:
    """The rows of finished evaluations not yet written, and when the oldest arrived."""

    def __init__(self, rows: int = ROWS, age_s: float = AGE_S, clock: Callable[[], float] = time.monotonic) -> None:
        if rows < 1 or age_s < 0:
            raise ValueError(f"a group holds at least one row for a non-negative time (got {rows}, {age_s})")
        self.rows, self.age_s, self._clock = rows, age_s, clock
        self.evaluations: list[list[Any]] = []
        self.events: list[list[Any]] = []
        self.steps: list[list[Any]] = []
        self.opened_at: float | None = None  # when the oldest buffered result arrived
        self.commits = 0  # transactions written, for the benchmark's group sizes
        self.committed = 0  # evaluations written
        self._types: dict[str, dict[str, str]] = {}  # table -> column -> type, read once per group mode

    @property
    def pending(self) -> int:
        return len(self.evaluations)

    def add(self, evaluation: list[Any], event: list[Any] | None, steps: Sequence[list[Any]]) -> None:
        if self.opened_at is None:
            self.opened_at = self._clock()
        self.evaluations.append(evaluation)
        if event is not None:
            self.events.append(event)
        self.steps.extend(steps)

    def due_in(self) -> float | None:
        """Seconds until the buffered rows must be committed (0: now); None when nothing waits."""
        if self.opened_at is None:
            return None
        if self.pending >= self.rows:
            return 0.0
        return max(0.0, self.opened_at + self.age_s - self._clock())

    def due(self) -> bool:
        wait = self.due_in()
        return wait is not None and wait <= 0.0

    def write(self, con: Any) -> int:
        """Write every buffered row in one committed transaction and empty the buffer; the number of evaluations
        written. On an error nothing is written (rolled back), the buffer is emptied all the same and the error
        raised: like a failed single write before, the run cannot go on from rows it could not store."""
        count = self.pending
        if not count:
            return 0
        evaluations, events, steps = self.evaluations, self.events, self.steps
        self.evaluations, self.events, self.steps, self.opened_at = [], [], [], None
        con.execute("BEGIN")
        try:
            for table, columns, rows in (
                ("evaluations", None, evaluations),
                ("events", EVENT_COLUMNS, events),
                ("trajectory_steps", None, steps),
            ):
                if rows:
                    if table not in self._types:
                        self._types[table] = dict(column_types(con, table))
                    insert_rows(con, table, self._types[table], columns, rows)
            con.execute("COMMIT")
        except BaseException:
            rollback(con)
            raise
        self.commits += 1
        self.committed += count
        return count


def column_types(con: Any, table: str) -> list[tuple[str, str]]:
    """(name, DuckDB type) of `table`'s columns in table order (the main database's: a live copy may be attached)."""
    return con.execute(
        "SELECT column_name, data_type FROM information_schema.columns "
        "WHERE table_name = ? AND table_catalog = current_database() AND table_schema = 'main' "
        "ORDER BY ordinal_position",
        [table],
    ).fetchall()


def insert_rows(
    con: Any, table: str, types: dict[str, str], columns: Sequence[str] | None, rows: Sequence[Sequence[Any]]
) -> None:
    """Rows into `table` with one statement: each column's values as one typed list, unnested side by side.
    `types`: the table's column types in table order; `columns`: the names the rows' values are for, in order
    (None: the table's first len(row) columns)."""
    names = list(columns) if columns is not None else list(types)[: len(rows[0])]
    values = [list(column) for column in zip(*rows, strict=True)]
    quoted = ", ".join(f'"{name}"' for name in names)
    unnested = ", ".join(f"unnest(?::{types[name]}[])" for name in names)
    con.execute(f"INSERT INTO {table} ({quoted}) SELECT {unnested}", values)
