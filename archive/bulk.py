"""Rows added many at a time: a synthetic archive for benchmarks and tests of what reads archives
(engine/plots/synthetic.py). Each table's rows come as equal-length columns and go in with one statement
(the lists unnested side by side), so thousands of rows take milliseconds."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from archive.errors import ArchiveError, ArchiveFull, is_disk_full, rollback
from archive.reader import Reader

Columns = Mapping[str, Sequence[Any]]  # column name -> its values, one per row


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class BulkWrites(Reader):
    writes: int

    def full(self) -> ArchiveFull:  # Archive's: where the disk filled, and how to go on
        raise NotImplementedError

    def add_rows(self, tables: Mapping[str, Columns]) -> None:
        """Add rows to public tables, in one transaction: {table: {column: values}}; columns left out take
        their default (NULL). A table or column the schema does not have is an ArchiveError."""
        con = self._con
        con.execute("BEGIN")
        try:
            for table, columns in tables.items():
                self._insert_columns(table, columns)
            con.execute("COMMIT")
        except BaseException as exc:
            rollback(con)
            if is_disk_full(exc):
                raise self.full() from None
            raise
        self.writes += 1

    def _insert_columns(self, table: str, columns: Columns) -> None:
        types = dict(
            self._rows("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ?", [table])
        )
        unknown = [c for c in columns if c not in types]
        if not types or unknown:
            raise ArchiveError(f"the archive has no table {table}" if not types else f"{table} has no {unknown}")
        if len({len(values) for values in columns.values()}) > 1:
            raise ArchiveError(f"the columns given for {table} differ in length")
        names = ", ".join(_quoted(c) for c in columns)
        values = ", ".join(f"unnest(?::{types[c]}[])" for c in columns)
        self._con.execute(
            f"INSERT INTO {_quoted(table)} ({names}) SELECT {values}", [list(v) for v in columns.values()]
        )
