"""The archive: public schema, one transaction per event, refusals with one clear line."""

from __future__ import annotations

import subprocess
import sys
import time

import duckdb
import pytest

from archive import (
    SCHEMA_VERSION,
    Archive,
    ArchiveError,
    ArchiveLocked,
    ArchiveSchemaError,
    EvaluationRecord,
    NodeRecord,
)
from archive.store import files_hash

PUBLIC_COLUMNS = {
    "runs": {"id", "config", "schema_version", "seed", "created_at", "status"},
    "nodes": {
        "id",
        "run_id",
        "parent_id",
        "depth",
        "status",
        "created_at",
        "mutator",
        "model",
        "diff",
        "code_hash",
        "reason",
    },
    "blobs": {"hash", "content"},
    "node_files": {"node_id", "path", "hash"},
    "evaluations": {
        "node_id",
        "instance_id",
        "split",
        "repeat",
        "score",
        "metrics",
        "status",
        "runtime_s",
        "stdout_tail",
        "stderr_tail",
        "feedback",
        "worker",
        "started_at",
        "finished_at",
    },
    "llm_calls": {
        "id",
        "node_id",
        "purpose",
        "model",
        "request_hash",
        "request",
        "response",
        "tokens_in",
        "tokens_out",
        "cost_usd",
        "latency_s",
        "error",
        "created_at",
    },
    "events": {"seq", "at", "kind", "node_id", "detail"},
}


@pytest.fixture
def archive(tmp_path):
    a = Archive.create(tmp_path / "run" / "archive.duckdb", "r1", {"budget": 3}, seed=7)
    yield a
    a.close()


def test_public_schema_has_every_documented_column(archive):
    for table, columns in PUBLIC_COLUMNS.items():
        found = {
            r[0]
            for r in archive.query("SELECT column_name FROM information_schema.columns WHERE table_name = ?", [table])
        }
        assert columns <= found, (table, columns - found)
    assert archive.run_row()["schema_version"] == SCHEMA_VERSION


def test_unchanged_files_are_stored_once(archive):
    files = {"agent.py": "def priority(item, bins):\n    return bins\n", "util.py": "X = 1\n"}
    archive.add_node(NodeRecord(0, None, 0, "valid", "seed", code_hash=files_hash(files)), files)
    child = dict(files, **{"agent.py": "def priority(item, bins):\n    return -bins\n"})
    archive.add_node(NodeRecord(1, 0, 1, "valid", "offline", code_hash=files_hash(child)), child)
    assert archive.query("SELECT count(*) FROM blobs")[0][0] == 3
    assert archive.node_files(1) == child


def test_node_and_its_event_commit_together(archive):
    archive.add_node(NodeRecord(0, None, 0, "valid", "seed"), {"a.py": "x = 1\n"}, event=("start", 0, {"k": 1}))
    with pytest.raises(duckdb.Error):  # same id again: the whole transaction is rolled back
        archive.add_node(NodeRecord(0, None, 0, "valid", "seed"), {"a.py": "x = 2\n"}, event=("expand", 0, {}))
    assert [e[1] for e in archive.events()] == ["start"]
    assert archive.add_event("resume") == 2  # the sequence did not skip


def test_evaluation_is_unique_per_node_instance_repeat(archive):
    archive.add_node(NodeRecord(0, None, 0, "valid", "seed"), {"a.py": ""})
    ev = EvaluationRecord(0, "i1", "dev", 0, 0.5, {"bins": 3})
    archive.add_evaluation(ev, event=("evaluate", 0, {"score": 0.5}))
    with pytest.raises(duckdb.Error):
        archive.add_evaluation(ev, event=("evaluate", 0, {"score": 0.5}))
    assert len(archive.evaluations()) == 1
    assert len(list(archive.events("evaluate"))) == 1


def test_create_never_overwrites(tmp_path, archive):
    with pytest.raises(ArchiveError, match="refusing to overwrite"):
        Archive.create(archive.path, "r2", {}, seed=0)


def test_open_reads_back_what_was_written(tmp_path):
    path = tmp_path / "archive.duckdb"
    with Archive.create(path, "r9", {"budget": 5}, seed=3) as a:
        a.add_instances([("i1", "dev", {"x": 1}), ("i2", "holdout", {"x": 2})])
    with Archive.open(tmp_path) as b:  # a run folder works too
        assert b.run_id == "r9" and b.config() == {"budget": 5}
        assert [i[0] for i in b.instances()] == ["i1", "i2"]


def test_not_an_archive(tmp_path):
    with pytest.raises(ArchiveError, match="not an archive"):
        Archive.open(tmp_path / "nowhere")
    bogus = tmp_path / "archive.duckdb"
    bogus.write_text("hello")
    with pytest.raises(ArchiveError, match="not a"):
        Archive.open(bogus)
    other = tmp_path / "other.duckdb"
    duckdb.connect(str(other)).close()
    with pytest.raises(ArchiveError, match="not a Clade archive"):
        Archive.open(other)


def test_newer_schema_is_refused(tmp_path):
    path = tmp_path / "archive.duckdb"
    with Archive.create(path, "r1", {}, seed=0) as a:
        a.query("UPDATE runs SET schema_version = ?", [SCHEMA_VERSION + 1])
    with pytest.raises(ArchiveSchemaError, match="newer"):
        Archive.open(path)


def test_archive_held_by_another_process_is_refused(tmp_path):
    path = tmp_path / "archive.duckdb"
    Archive.create(path, "r1", {}, seed=0).close()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb, time; c = duckdb.connect({str(path)!r}); print('held', flush=True); time.sleep(30)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(ArchiveLocked, match="another running search"):
            Archive.open(path)
    finally:
        holder.kill()
        holder.wait()
    time.sleep(0.1)
    Archive.open(path).close()  # free again once the holder is gone


def test_llm_calls_are_a_replay_cache(archive):
    from archive import LLMCallRecord

    assert archive.llm_answer("h1") is None and archive.next_llm_call_id() == 0
    archive.add_llm_call(LLMCallRecord(0, None, "mutate", "m", "h1", {"messages": []}, None, error="RateLimitError"))
    assert archive.llm_answer("h1") is None  # failures are not answers
    archive.add_llm_call(LLMCallRecord(1, 3, "mutate", "m", "h1", {"messages": []}, {"text": "hi"}, 10, 20, 0.1, 0.5))
    hit = archive.llm_answer("h1")
    assert hit.id == 1 and hit.response == {"text": "hi"} and hit.cost_usd == 0.1
    assert archive.llm_spend() == (0.1, 10, 20, 2)
    assert archive.next_llm_call_id() == 2


def test_a_tester_round_with_no_proposal_stores_its_event_and_no_row(archive):
    # a mutated tester may propose nothing in a round: the round goes on (it raised from DuckDB's executemany)
    archive.add_arena_proposals(0, 1, [], None, event=("arena_tests", 0, {"arena_round": 1, "proposed": 0}))
    assert archive.query("SELECT count(*) FROM arena_proposals")[0][0] == 0
    assert archive.query("SELECT count(*) FROM events WHERE kind = 'arena_tests'")[0][0] == 1
