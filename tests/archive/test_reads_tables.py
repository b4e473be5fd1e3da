"""Whole public tables as Arrow (archive/reads_tables.py): every row and column as stored, only the listed
tables, and an optional table an older archive lacks read as empty with its columns."""

from __future__ import annotations

import duckdb
import pytest

from archive import Archive
from archive.reads_tables import PUBLIC_TABLES
from archive.schema import OPTIONAL_TABLES, TABLES
from engine.plots.synthetic import synthetic_archive


def _schema() -> dict[str, list[str]]:
    """{table: its columns in order}, from the schema's own DDL."""
    with duckdb.connect() as con:
        con.execute(TABLES)
        names = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()]
        return {n: [r[0] for r in con.execute(f"DESCRIBE {n}").fetchall()] for n in names}


def test_every_public_table_comes_whole_with_its_columns(tmp_path):
    path = synthetic_archive(tmp_path / "run.duckdb", n_nodes=30, seed=2)
    schema = _schema()
    assert set(PUBLIC_TABLES) <= set(schema) and "blobs" not in PUBLIC_TABLES  # blobs: node_files' content
    with duckdb.connect(str(path), read_only=True) as con:
        counts = {name: con.execute(f"SELECT count(*) FROM {name}").fetchone()[0] for name in PUBLIC_TABLES}
    with Archive.open(path, read_only=True) as archive:
        for name in PUBLIC_TABLES:
            table = archive.table_arrow(name)
            assert table.column_names == schema[name], name
            assert table.num_rows == counts[name], name
        nodes = archive.table_arrow("nodes")
        assert nodes.column("id").to_pylist() == list(range(30))  # in id order
        assert counts["nodes"] == 30 and counts["evaluations"] > 30


def test_a_name_outside_the_list_is_refused(tmp_path):
    path = synthetic_archive(tmp_path / "run.duckdb", n_nodes=5, seed=2)
    with Archive.open(path, read_only=True) as archive:
        for name in ("blobs", "nodes; DROP TABLE nodes", "information_schema.tables"):
            with pytest.raises(ValueError, match="not a public table"):
                archive.table_arrow(name)


def test_an_optional_table_an_older_archive_lacks_reads_empty(tmp_path):
    path = synthetic_archive(tmp_path / "run.duckdb", n_nodes=5, seed=2)
    with duckdb.connect(str(path)) as con:
        for name in OPTIONAL_TABLES:
            con.execute(f"DROP TABLE {name}")
    schema = _schema()
    with Archive.open(path, read_only=True) as archive:
        for name in OPTIONAL_TABLES:
            assert not archive.has_table(name)
            table = archive.table_arrow(name)
            assert table.num_rows == 0 and table.column_names == schema[name]
