"""Snapshots: a run's archive as Parquet, one file per public table, plus a manifest.

    export_snapshot(run, dest)            -> the manifest written to dest/manifest.json
    verify_snapshot(dest)                 -> the manifest, or SnapshotError in one line
    restore_snapshot(dest, archive_file)  -> a new archive holding exactly the snapshot's rows

Rows are written in the order of each table's key (`TABLE_ORDER`), so the
same archive always gives the same bytes: export, restore and export again
give byte-identical Parquet files. `instances` keeps the order the run added
them in, which is the run's dev index. DuckDB writes and reads the Parquet
itself (no pyarrow needed); any Parquet reader can open the files.

The manifest names the schema version, the run, and each table's file, row
count and sha256. A snapshot of a newer schema, or a damaged one (a file
missing, a checksum or a row count that does not match), is refused with one
line before anything is written.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from archive.errors import ArchiveError
from archive.schema import OPTIONAL_TABLES, SCHEMA_VERSION, TABLES
from archive.store import Archive, archive_path

MANIFEST = "manifest.json"
FORMAT = "clade-snapshot"

# Every public table and the key its rows are written in (deterministic files).
TABLE_ORDER: dict[str, str] = {
    "runs": "id",
    "instances": "rowid",  # the order the run added them: its dev index
    "nodes": "id",
    "blobs": "hash",
    "node_files": "node_id, path",
    "evaluations": 'node_id, instance_id, "repeat"',
    "reference_evaluations": "agent, instance_id",
    "llm_calls": "id",
    "events": "seq",
    "trajectory_steps": 'node_id, kind, instance_id, "repeat", step',  # optional: older archives lack it
    "arena_proposals": "tester_id, arena_round, item",  # optional: only arena runs write it
    "recommendations": "version",  # optional: only --meta-recommendations writes it
    "prompts": "id",  # optional: only --evolve-prompts writes it
}


def damaged_snapshot(folder: Path | str, what: str) -> SnapshotError:
    """A snapshot whose files are cut or changed: what is wrong, and what the user can do."""
    return SnapshotError(
        f"{folder} is damaged: {what}; export the run again (clade snapshot export RUN NEW_FOLDER) or use another "
        "copy of the snapshot"
    )


class SnapshotError(ArchiveError):
    """The folder is not a snapshot this Clade can restore, or a snapshot cannot be written there."""


def _sql_path(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _clade_version() -> str:
    """This code's version (clade/__init__.py), installed or run from a clone: not the metadata of whatever
    distribution is named `clade` (PyPI's `clade` is another project)."""
    from clade import __version__

    return __version__


# ----- export -------------------------------------------------------------
def export_snapshot(run: str | Path, dest: str | Path) -> dict[str, Any]:
    """Write every public table of the run's archive to dest/<table>.parquet, then dest/manifest.json.

    dest must not exist or be an empty folder: nothing already there is overwritten. The files are
    written beside it first and moved into place at the end, so a failed export leaves no half snapshot."""
    dest = Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise SnapshotError(f"{dest} already exists and is not empty; give a new folder (nothing is overwritten)")
    source = archive_path(run)
    with Archive.open(source, read_only=True) as archive:
        con = archive._con
        con.execute("SET enable_progress_bar = false")  # a library prints nothing
        present = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        missing = [t for t in TABLE_ORDER if t not in present and t not in OPTIONAL_TABLES]
        if missing:
            raise SnapshotError(f"{source} lacks table(s) {', '.join(missing)}: not a complete Clade archive")
        dest.parent.mkdir(parents=True, exist_ok=True)
        work = dest.parent / f".{dest.name}.partial-{os.getpid()}"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        try:
            tables: dict[str, dict[str, Any]] = {}
            for table, order in TABLE_ORDER.items():
                if table not in present:  # an optional table an older archive never had: nothing to keep
                    continue
                file = work / f"{table}.parquet"
                rows = _count(con, table)
                con.execute(
                    f"COPY (SELECT * FROM {table} ORDER BY {order}) TO {_sql_path(file)} "
                    "(FORMAT parquet, COMPRESSION zstd)"
                )
                tables[table] = {"file": file.name, "rows": rows, "sha256": file_sha256(file)}
            manifest = {
                "format": FORMAT,
                "schema_version": SCHEMA_VERSION,
                "run_id": archive.run_id,
                "clade_version": _clade_version(),
                "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
                "source": str(source.resolve()),
                "tables": tables,
            }
            (work / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
            if dest.exists():
                dest.rmdir()  # empty, checked above
            work.rename(dest)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
    return manifest


# ----- verify ---------------------------------------------------------------
def verify_snapshot(folder: str | Path) -> dict[str, Any]:
    """The snapshot's manifest, once every file is present and matches its checksum; SnapshotError otherwise."""
    folder = Path(folder)
    if not folder.is_dir():
        raise SnapshotError(f"{folder} is not a snapshot (no such folder)")
    file = folder / MANIFEST
    if not file.is_file():
        raise SnapshotError(f"{folder} is not a Clade snapshot (no {MANIFEST})")
    try:
        manifest = json.loads(file.read_text())
    except (ValueError, UnicodeDecodeError) as exc:
        raise damaged_snapshot(folder, f"{MANIFEST} is not JSON ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise SnapshotError(f"{folder} is not a Clade snapshot ({MANIFEST} does not say format {FORMAT!r})")
    version = manifest.get("schema_version")
    if not isinstance(version, int) or version < 1:
        raise damaged_snapshot(folder, f"{MANIFEST} has no valid schema_version")
    if version > SCHEMA_VERSION:
        raise SnapshotError(
            f"{folder} has schema version {version}, newer than this Clade's {SCHEMA_VERSION}; "
            "upgrade Clade to restore it"
        )
    if not isinstance(manifest.get("run_id"), str):
        raise damaged_snapshot(folder, f"{MANIFEST} names no run_id")
    tables = manifest.get("tables")
    if not isinstance(tables, dict):
        raise damaged_snapshot(folder, f"{MANIFEST} lists no tables")
    unknown = sorted(set(tables) - set(TABLE_ORDER))
    if unknown:
        raise SnapshotError(
            f"{folder} holds table(s) {', '.join(unknown)}, unknown to schema version "
            f"{SCHEMA_VERSION}: damaged, or not made by Clade"
        )
    absent = [t for t in TABLE_ORDER if t not in tables and t not in OPTIONAL_TABLES]
    if absent:
        raise damaged_snapshot(folder, f"{MANIFEST} lists no {', '.join(absent)}")
    for table in TABLE_ORDER:
        entry = tables.get(table)
        if entry is None:
            continue
        if (
            not isinstance(entry, dict)
            or entry.get("file") != f"{table}.parquet"
            or not isinstance(entry.get("rows"), int)
            or not isinstance(entry.get("sha256"), str)
        ):
            raise damaged_snapshot(folder, f"{MANIFEST}'s entry for {table} is malformed")
        path = folder / entry["file"]
        if not path.is_file():
            raise damaged_snapshot(folder, f"{entry['file']} is missing")
        if file_sha256(path) != entry["sha256"]:
            raise damaged_snapshot(folder, f"{entry['file']} does not match its sha256 in {MANIFEST}")
    return manifest


def snapshot_run_row(folder: str | Path) -> dict[str, Any]:
    """The snapshot's `runs` row (id, config as a dict, seed, status, ...), from a verified snapshot."""
    import duckdb

    path = Path(folder) / "runs.parquet"
    con = duckdb.connect()
    try:
        cur = con.execute(f"SELECT * FROM read_parquet({_sql_path(path)})")
        names = [d[0] for d in cur.description]
        rows = cur.fetchall()
    except duckdb.Error as exc:
        raise damaged_snapshot(folder, f"runs.parquet is unreadable ({str(exc).splitlines()[0]})") from None
    finally:
        con.close()
    if len(rows) != 1:
        raise damaged_snapshot(folder, f"runs.parquet holds {len(rows)} runs, not 1")
    row = dict(zip(names, rows[0]))
    row["config"] = json.loads(row["config"]) if isinstance(row["config"], str) else row["config"]
    return row


# ----- restore --------------------------------------------------------------
def restore_snapshot(
    folder: str | Path, target: str | Path, run_id: str | None = None, config: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Write a new archive file `target` holding exactly the snapshot's rows; returns the manifest.

    Without `run_id` the restore is exact (the second export is byte-identical). With it, the
    archive becomes a new run: its `runs` row takes the new id, `config`, the current schema version,
    fresh times and status `running`; the rows of every other table stay as they were (so
    `nodes.run_id` still names the run that made each node)."""
    folder = Path(folder)
    manifest = verify_snapshot(folder)
    target = Path(target)
    if target.exists():
        raise SnapshotError(f"{target} already exists; refusing to overwrite it")
    import duckdb

    made_folder = not target.parent.exists()
    target.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(target))
    try:
        con.execute("SET enable_progress_bar = false")
        con.execute("BEGIN")
        con.execute(TABLES)
        for table in TABLE_ORDER:
            entry = manifest["tables"].get(table)
            if entry is None:  # an optional table the snapshot's archive did not have: restored empty
                continue
            source = _sql_path(folder / entry["file"])
            try:
                con.execute(
                    f"INSERT INTO {table} BY NAME SELECT * EXCLUDE (file_row_number) "
                    f"FROM read_parquet({source}, file_row_number = true) ORDER BY file_row_number"
                )
            except duckdb.Error as exc:
                raise SnapshotError(
                    f"{folder} cannot be restored: {entry['file']} does not fit table {table} "
                    f"({str(exc).splitlines()[0]})"
                ) from None
            rows = _count(con, table)
            if rows != entry["rows"]:
                raise SnapshotError(
                    f"{folder} is damaged: {entry['file']} holds {rows} rows, {MANIFEST} says {entry['rows']}"
                )
        if run_id is not None:
            now = datetime.now(UTC).replace(tzinfo=None)
            con.execute(
                "UPDATE runs SET id = ?, config = ?, schema_version = ?, created_at = ?, updated_at = ?, "
                "status = 'running'",
                [run_id, json.dumps(dict(config or {}), sort_keys=True), SCHEMA_VERSION, now, now],
            )
        con.execute("COMMIT")
    except BaseException:
        con.close()
        for leftover in (target, target.with_name(target.name + ".wal")):
            leftover.unlink(missing_ok=True)
        if made_folder:
            shutil.rmtree(target.parent, ignore_errors=True)
        raise
    con.close()
    return manifest


def _count(con: Any, table: str) -> int:
    """Rows in one of the archive's own tables (a name from TABLE_ORDER, never user text)."""
    row = con.execute(f"SELECT count(*) FROM {table}").fetchone()
    assert row is not None  # count(*) always answers one row
    return int(row[0])
