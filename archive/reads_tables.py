"""Whole public tables as Arrow tables, for the Python API (`clade.Run.nodes()` and its peers).

Only the tables named here can be read, each in a fixed order, with the column names of archive/schema.py
unchanged: the table name is written into the SQL, so it must come from this list, never from a caller.
pyarrow is imported by DuckDB only when a table is asked for.
"""

from __future__ import annotations

from typing import Any

from archive.reader import Reader

# public table -> the order its rows come in (oldest first where a table has an order of its own)
PUBLIC_TABLES: dict[str, str] = {
    "runs": "id",
    "instances": "split, id",
    "nodes": "id",
    "node_files": "node_id, path",
    "evaluations": 'node_id, split, instance_id, "repeat"',
    "reference_evaluations": "agent, split, instance_id",
    "llm_calls": "id",
    "events": "seq",
    "trajectory_steps": 'node_id, kind, instance_id, "repeat", step',
    "arena_proposals": "tester_id, arena_round, item",
    "recommendations": "version",
    "prompts": "id",
}


class TableReads(Reader):
    def table_arrow(self, name: str) -> Any:
        """Every row of public table `name` as a `pyarrow.Table`, columns as stored; an optional table an older
        archive lacks comes back empty with its columns. ValueError for a name not in PUBLIC_TABLES."""
        order = PUBLIC_TABLES.get(name)
        if order is None:
            raise ValueError(f"{name!r} is not a public table; one of {', '.join(PUBLIC_TABLES)}")
        if not self.has_table(name):
            return _empty_table(name)
        cursor = self._con.cursor()  # its own: duckdb 2 refuses a relation beside an unfinished fetchone()
        try:
            return _arrow(cursor.sql(f"SELECT * FROM {name} ORDER BY {order}"))
        finally:
            cursor.close()


def _arrow(relation: Any) -> Any:
    """A relation's rows as a pyarrow.Table: duckdb 2 names it to_arrow_table (its arrow() gives a reader),
    duckdb 1's arrow() gives the table."""
    read = getattr(relation, "to_arrow_table", None)
    return read() if read is not None else relation.arrow()


def _empty_table(name: str) -> Any:
    """The columns of an optional table (archive/schema.py) with no rows, from a scratch in-memory database."""
    import duckdb

    from archive.schema import TABLES

    with duckdb.connect() as scratch:
        scratch.execute(TABLES)
        return _arrow(scratch.sql(f"SELECT * FROM {name}"))
