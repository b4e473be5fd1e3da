"""Snapshots: export to Parquet, restore, export again (byte-identical), refusals, and --resume-from."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pytest

from archive.schema import SCHEMA_VERSION, TABLES
from archive.snapshot import (
    TABLE_ORDER,
    SnapshotError,
    export_snapshot,
    restore_snapshot,
    verify_snapshot,
)
from tests.conftest import REPO, run_cli
from tests.engine.test_search_e2e import assert_budget_invariants, only_run, read


def snapshot_cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "engine.snapshot", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def one_error_line(out: subprocess.CompletedProcess) -> str:
    assert out.returncode == 2, out.stdout + out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), out.stderr
    return lines[0]


@pytest.fixture(scope="module")
def run_a(tmp_path_factory) -> Path:
    """A finished 30-evaluation search whose instances are not in alphabetical order (the dev index is kept)."""
    tmp = tmp_path_factory.mktemp("snap")
    rng = np.random.default_rng(3)
    names = [
        ("dev-c", "dev"),
        ("dev-a", "dev"),
        ("hold-z", "holdout"),
        ("dev-b", "dev"),
        ("hold-y", "holdout"),
        ("dev-0", "dev"),
    ]
    data = {
        name: {"capacity": 150, "items": rng.integers(20, 101, 100).tolist(), "split": split} for name, split in names
    }
    (tmp / "instances.json").write_text(json.dumps(data))
    out = run_cli(
        "--budget",
        "30",
        "--workers",
        "2",
        "--sandbox",
        "process",
        "--run-dir",
        str(tmp / "runs"),
        "--quiet",
        "--instances",
        str(tmp / "instances.json"),
    )
    assert out.returncode == 0, out.stderr
    return only_run(tmp / "runs")


def test_every_table_of_the_schema_is_in_a_snapshot():
    con = duckdb.connect()
    con.execute(TABLES)
    tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    assert tables == set(TABLE_ORDER)


@pytest.mark.slow
def test_export_restore_export_is_byte_identical(run_a, tmp_path):
    out = snapshot_cli("export", str(run_a), str(tmp_path / "s1"))
    assert out.returncode == 0, out.stderr
    assert "--resume-from" in out.stdout
    first = verify_snapshot(tmp_path / "s1")
    assert first["schema_version"] == SCHEMA_VERSION and first["run_id"] == run_a.name
    assert sorted(p.name for p in (tmp_path / "s1").iterdir()) == sorted(
        ["manifest.json", *(f"{t}.parquet" for t in TABLE_ORDER)]
    )
    restore_snapshot(tmp_path / "s1", tmp_path / "b" / "archive.duckdb")
    second = export_snapshot(tmp_path / "b", tmp_path / "s2")
    for table in TABLE_ORDER:
        a, b = first["tables"][table], second["tables"][table]
        assert a["rows"] == b["rows"]
        assert a["sha256"] == b["sha256"], table
        assert (tmp_path / "s1" / a["file"]).read_bytes() == (tmp_path / "s2" / b["file"]).read_bytes()
    # the restored archive holds the same rows, the instances in the run's own order (its dev index)
    for table in TABLE_ORDER:
        everything = f"SELECT * FROM {table} ORDER BY ALL"
        assert read(tmp_path / "b", everything) == read(run_a, everything)
    order = "SELECT id FROM instances ORDER BY rowid"
    assert read(tmp_path / "b", order) == read(run_a, order)
    assert [r[0] for r in read(run_a, order)][:2] == ["dev-c", "dev-a"]
    # and through the command line, into a run folder named by the run id
    out = snapshot_cli("restore", str(tmp_path / "s1"), "--run-dir", str(tmp_path / "restored"))
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "restored" / run_a.name / "archive.duckdb").is_file()
    assert "already exists" in one_error_line(
        snapshot_cli("restore", str(tmp_path / "s1"), "--run-dir", str(tmp_path / "restored"))
    )


def test_any_parquet_reader_sees_the_tables(run_a, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    manifest = export_snapshot(run_a, tmp_path / "s")
    for table in TABLE_ORDER:
        arrow = pq.read_table(tmp_path / "s" / f"{table}.parquet")
        assert arrow.num_rows == manifest["tables"][table]["rows"]
        columns = [r[0] for r in read(run_a, f"DESCRIBE {table}")]
        assert arrow.column_names == columns
    nodes = pq.read_table(tmp_path / "s" / "nodes.parquet").to_pydict()
    assert nodes["id"] == sorted(nodes["id"]) and nodes["parent_id"][0] is None


def test_export_writes_nothing_over_what_exists(run_a, tmp_path):
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "mine.txt").write_text("keep me")
    assert "not empty" in one_error_line(snapshot_cli("export", str(run_a), str(taken)))
    assert [p.name for p in taken.iterdir()] == ["mine.txt"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert snapshot_cli("export", str(run_a), str(empty)).returncode == 0
    assert (empty / "manifest.json").is_file()
    assert "not an archive" in one_error_line(snapshot_cli("export", str(tmp_path / "nowhere"), str(tmp_path / "x")))
    assert not (tmp_path / "x").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no partial folder left


def damage(snapshot: Path, how: str) -> None:
    manifest_file = snapshot / "manifest.json"
    manifest = json.loads(manifest_file.read_text())
    if how == "missing":
        (snapshot / "evaluations.parquet").unlink()
    elif how == "checksum":
        data = bytearray((snapshot / "nodes.parquet").read_bytes())
        data[len(data) // 2] ^= 0xFF
        (snapshot / "nodes.parquet").write_bytes(bytes(data))
    elif how == "newer":
        manifest["schema_version"] = SCHEMA_VERSION + 1
    elif how == "unknown-table":
        manifest["tables"]["secrets"] = {"file": "secrets.parquet", "rows": 0, "sha256": "0" * 64}
    elif how == "rows":
        manifest["tables"]["nodes"]["rows"] += 1
    elif how == "no-manifest":
        manifest_file.unlink()
        return
    manifest_file.write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    ("how", "says"),
    [
        ("missing", "evaluations.parquet is missing"),
        ("checksum", "nodes.parquet does not match its sha256"),
        ("newer", f"schema version {SCHEMA_VERSION + 1}, newer than this Clade's {SCHEMA_VERSION}"),
        ("unknown-table", "secrets"),
        ("no-manifest", "no manifest.json"),
    ],
)
def test_a_damaged_or_newer_snapshot_is_refused_in_one_line(run_a, tmp_path, how, says):
    snap = tmp_path / "s"
    export_snapshot(run_a, snap)
    damage(snap, how)
    assert says in one_error_line(snapshot_cli("verify", str(snap)))
    runs = tmp_path / "runs"
    assert says in one_error_line(run_cli("--resume-from", str(snap), "--run-dir", str(runs), "--quiet"))
    assert not runs.exists() or list(runs.iterdir()) == []  # no run folder made


def test_a_row_count_that_does_not_match_is_refused_and_nothing_is_left(run_a, tmp_path):
    snap = tmp_path / "s"
    export_snapshot(run_a, snap)
    damage(snap, "rows")
    target = tmp_path / "b" / "archive.duckdb"
    with pytest.raises(SnapshotError, match="nodes.parquet holds .* rows, manifest.json says"):
        restore_snapshot(snap, target)
    assert not target.parent.exists()
    runs = tmp_path / "runs"
    assert "nodes.parquet holds" in one_error_line(run_cli("--resume-from", str(snap), "--run-dir", str(runs)))
    assert list(runs.iterdir()) == []  # no run folder left


@pytest.mark.slow
def test_resume_from_a_snapshot_is_a_new_run_that_goes_on_to_its_budget(run_a, tmp_path):
    snap = tmp_path / "s1"
    export_snapshot(run_a, snap)
    runs = tmp_path / "runs"
    out = run_cli("--resume-from", str(snap), "--budget", "44", "--workers", "2", "--run-dir", str(runs), "--quiet")
    assert out.returncode == 0, out.stderr
    assert "resumed at 30" in out.stdout
    run_b = only_run(runs)
    assert run_b.name != run_a.name
    assert_budget_invariants(run_b, 44)
    ((run_id, status, config),) = read(run_b, "SELECT id, status, config FROM runs")
    config = json.loads(config)
    assert run_id == run_b.name and status == "finished"
    assert config["budget"] == 44 and config["resumed_from"]["run_id"] == run_a.name
    assert config["resumed_from"]["snapshot"] == str(snap.resolve())
    # every row of the snapshot is in the new run, unchanged (nodes.run_id still names the run that made it)
    con = duckdb.connect(str(run_b / "archive.duckdb"), read_only=True)
    try:
        for table in TABLE_ORDER:
            if table == "runs":
                continue
            lost = con.execute(
                f"SELECT count(*) FROM (SELECT * FROM read_parquet('{snap / (table + '.parquet')}') "
                f"EXCEPT ALL SELECT * FROM {table})"
            ).fetchone()[0]
            assert lost == 0, table
        made_by = dict(con.execute("SELECT run_id, count(*) FROM nodes GROUP BY ALL").fetchall())
        assert made_by[run_a.name] == read(run_a, "SELECT count(*) FROM nodes")[0][0]
        assert made_by.get(run_b.name, 0) > 0
        kinds = [
            k
            for (k,) in con.execute(
                "SELECT kind FROM events WHERE seq > (SELECT max(seq) FROM "
                f"read_parquet('{snap / 'events.parquet'}')) ORDER BY seq"
            ).fetchall()
        ]
    finally:
        con.close()
    assert kinds[:2] == ["restore", "resume"]
    # the original run is untouched
    assert read(run_a, "SELECT count(*) FROM evaluations WHERE split = 'dev'")[0][0] == 30


def test_resume_from_refuses_what_a_run_keeps(run_a, tmp_path):
    snap = tmp_path / "s1"
    export_snapshot(run_a, snap)
    runs = tmp_path / "runs"
    assert "--seed cannot be set with --resume-from" in one_error_line(
        run_cli("--resume-from", str(snap), "--seed", "4", "--run-dir", str(runs))
    )
    assert "--policy cannot be set" in one_error_line(
        run_cli("--resume-from", str(snap), "--policy", "greedy", "--run-dir", str(runs))
    )
    assert "neither --resume" in one_error_line(run_cli("--resume-from", str(snap), "--resume", str(run_a)))
    assert "not a snapshot" in one_error_line(run_cli("--resume-from", str(tmp_path / "nope"), "--run-dir", str(runs)))
    assert not runs.exists()


def test_a_snapshot_made_before_a_later_nullable_column_still_restores(run_a, tmp_path):
    from archive.snapshot import file_sha256

    snap = tmp_path / "s"
    export_snapshot(run_a, snap)
    calls = snap / "llm_calls.parquet"
    con = duckdb.connect()
    columns = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM read_parquet('{calls}')").fetchall()]
    if "instance_id" not in columns:
        pytest.skip("llm_calls has no later column in this schema")
    older = tmp_path / "older.parquet"
    con.execute(f"COPY (SELECT * EXCLUDE (instance_id) FROM read_parquet('{calls}')) TO '{older}' (FORMAT parquet)")
    con.close()
    older.replace(calls)
    manifest = json.loads((snap / "manifest.json").read_text())
    manifest["tables"]["llm_calls"]["sha256"] = file_sha256(calls)
    (snap / "manifest.json").write_text(json.dumps(manifest))
    restore_snapshot(snap, tmp_path / "b" / "archive.duckdb")
    assert "instance_id" in [r[0] for r in read(tmp_path / "b", "DESCRIBE llm_calls")]
