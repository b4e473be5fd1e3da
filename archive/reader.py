"""The base of the archive's readers: one connection and three ways to run a read on it.

The named questions live in topic mixins (reads_nodes, reads_evaluations, reads_llm, reads_arena,
reads_report) that `Archive` inherits; each is plain SQL over the public tables and works on a
read-only archive, a running search's live copy included.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class Reader:
    """What every reader mixin needs of the archive: its DuckDB connection."""

    _db: Any  # the connection itself: only the archive's group commit uses it directly

    @property
    def _con(self) -> Any:
        """The connection, once whatever the archive holds back is committed (archive/group_commit.py): every
        read and write goes through here, so none can see, or commit, rows out of the order they were written."""
        self._settle()
        return self._db

    def _settle(self) -> None:
        """Commit what is held back (the archive's group commit); nothing for a plain reader."""

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        return self._con.execute(sql, list(params)).fetchall()

    def _row(self, sql: str, params: Sequence[Any] = ()) -> tuple | None:
        return self._con.execute(sql, list(params)).fetchone()

    def _value(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """The first column of the first row (an aggregate's answer)."""
        return self._con.execute(sql, list(params)).fetchone()[0]

    def has_table(self, name: str) -> bool:
        """Whether the archive has table `name` (an archive older than the table, opened read-only, has not)."""
        return bool(self._value("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [name]))

    def has_column(self, table: str, column: str) -> bool:
        """Whether `table` has `column` (an archive older than the column, opened read-only, has not)."""
        return bool(
            self._value(
                "SELECT count(*) FROM information_schema.columns WHERE table_name = ? AND column_name = ?",
                [table, column],
            )
        )


def marks(values: Sequence[Any]) -> str:
    """`?, ?, ?`: one parameter mark per value, for `IN (...)`."""
    return ", ".join("?" * len(values))


def among(column: str, ids: Sequence[int] | None) -> str:
    """`WHERE column IN (ids)` (ints only, written in), or nothing when ids is None."""
    return "" if ids is None else f"WHERE {column} IN ({', '.join(str(int(i)) for i in ids) or 'NULL'})"
