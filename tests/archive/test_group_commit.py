"""Group commit (archive/group_commit.py): evaluations held back are committed together, by count, by age,
before any other read or write, and on leaving; what another connection sees is always a prefix."""

from __future__ import annotations

import time

import duckdb
import pytest

from archive import Archive, ArchiveError, EvaluationRecord, LLMCallRecord, NodeRecord
from archive.group_commit import GroupCommit


@pytest.fixture
def archive(tmp_path):
    a = Archive.create(tmp_path / "run" / "archive.duckdb", "r1", {"budget": 3}, seed=7)
    a.add_node(NodeRecord(0, None, 0, "valid", "seed"), {"a.py": "x = 1\n"})
    yield a
    a.close()


def evaluation(instance: int, node: int = 0) -> EvaluationRecord:
    return EvaluationRecord(node, f"i{instance}", "dev", 0, 0.25 * (instance % 4), {"bins": instance}, worker="w0")


def committed(archive: Archive, table: str = "evaluations") -> int:
    """Rows of `table` another connection sees: committed ones only (a cursor is a connection of its own)."""
    other = archive._db.cursor()
    try:
        return other.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    finally:
        other.close()


def test_held_back_until_the_group_is_full(archive):
    with archive.group_commits(rows=4, age_s=60.0):
        for i in range(3):
            archive.add_evaluation(evaluation(i), event=("evaluate", 0, {"i": i}))
        assert committed(archive) == 0 and committed(archive, "events") == 0  # (the node's commit made no event)
        archive.add_evaluation(evaluation(3), event=("evaluate", 0, {"i": 3}))
        assert committed(archive) == 4 and committed(archive, "events") == 4


def test_held_back_at_most_age_s(archive):
    with archive.group_commits(rows=64, age_s=0.02):
        archive.add_evaluation(evaluation(0))
        wait = archive.commit_due_in()
        assert wait is not None and 0 < wait <= 0.02
        assert archive.commit_if_due() == 0 and committed(archive) == 0
        time.sleep(0.03)
        assert archive.commit_due_in() == 0.0
        assert archive.commit_if_due() == 1 and committed(archive) == 1
        assert archive.commit_due_in() is None  # nothing held back: no timer


def test_any_other_read_or_write_commits_the_group_first(archive):
    with archive.group_commits(rows=64, age_s=60.0):
        archive.add_evaluation(evaluation(0), event=("evaluate", 0, {}))
        assert len(archive.evaluations()) == 1  # a read of this process sees it, by committing it
        assert committed(archive) == 1
        archive.add_evaluation(evaluation(1), event=("evaluate", 0, {}))
        archive.add_llm_call(LLMCallRecord(1, 0, "mutate", "m", "h", {"q": 1}, {"a": 2}))  # paid: committed at once
        assert committed(archive) == 2 and committed(archive, "llm_calls") == 1
        archive.add_evaluation(evaluation(2), event=("evaluate", 0, {}))
        seq = archive.add_event("stop")  # an event written later takes a later sequence number
        assert committed(archive) == 3
    kinds = [(s, k) for s, k, _, _ in archive.events()]
    assert kinds == [(1, "evaluate"), (2, "evaluate"), (3, "evaluate"), (seq, "stop")] and seq == 4


def test_leaving_commits_whatever_the_way_out(archive):
    with pytest.raises(KeyboardInterrupt):
        with archive.group_commits(rows=64, age_s=60.0):
            archive.add_evaluation(evaluation(0), steps=[{"tool": "bash", "action": "ls", "result": "a.py"}])
            raise KeyboardInterrupt
    assert committed(archive) == 1 and committed(archive, "trajectory_steps") == 1
    archive.add_evaluation(evaluation(1))  # outside: its own transaction at once, as before
    assert committed(archive) == 2


def test_close_commits_the_group(tmp_path):
    path = tmp_path / "run" / "archive.duckdb"
    a = Archive.create(path, "r1", {}, seed=0)
    a.add_node(NodeRecord(0, None, 0, "valid", "seed"), {"a.py": ""})
    group = a.group_commits(rows=64, age_s=60.0)
    group.__enter__()
    a.add_evaluation(evaluation(0), event=("evaluate", 0, {}))
    a.close()
    con = duckdb.connect(str(path), read_only=True)
    assert con.execute("SELECT count(*) FROM evaluations").fetchone()[0] == 1
    con.close()


def test_rows_written_grouped_read_back_as_written_alone(tmp_path):
    steps = [{"tool": "python", "action": "run", "tokens_in": 3, "time_s": 0.5, "result": "ok"}]
    tables = []
    for rows in (1, 8):
        a = Archive.create(tmp_path / f"run{rows}" / "archive.duckdb", "r1", {}, seed=0)
        a.add_node(NodeRecord(0, None, 0, "valid", "seed"), {"a.py": ""})
        with a.group_commits(rows=rows, age_s=60.0):
            for i in range(5):
                a.add_evaluation(evaluation(i), event=("evaluate", 0, {"i": i}), steps=steps)
        tables.append(
            (
                a.query("SELECT * EXCLUDE (started_at, finished_at) FROM evaluations ORDER BY instance_id"),
                a.query("SELECT seq, kind, node_id, detail FROM events ORDER BY seq"),
                a.query("SELECT * FROM trajectory_steps ORDER BY instance_id"),
            )
        )
        a.close()
    assert tables[0] == tables[1]
    assert len(tables[0][0]) == 5 and len(tables[0][2]) == 5


def test_a_failed_group_is_rolled_back_whole_and_raised(archive):
    archive.add_evaluation(evaluation(0))
    with pytest.raises(duckdb.Error):
        with archive.group_commits(rows=3, age_s=60.0):
            archive.add_evaluation(evaluation(1), event=("evaluate", 0, {}))
            archive.add_evaluation(evaluation(0), event=("evaluate", 0, {}))  # stored already: the group fails
            archive.add_evaluation(evaluation(2), event=("evaluate", 0, {}))
    assert committed(archive) == 1 and committed(archive, "events") == 0
    assert archive.add_event("resume") == 1  # the sequence numbers of the lost group are free again


def test_one_group_at_a_time(archive):
    with archive.group_commits(rows=4):
        with pytest.raises(ArchiveError, match="already on"):
            with archive.group_commits(rows=4):
                pass


def test_group_bounds_are_checked():
    with pytest.raises(ValueError):
        GroupCommit(rows=0)
    clock = [0.0]
    group = GroupCommit(rows=2, age_s=0.5, clock=lambda: clock[0])
    assert group.due_in() is None and not group.due()
    group.add([1], None, [])
    clock[0] = 0.2
    assert group.due_in() == pytest.approx(0.3) and not group.due()
    group.add([2], None, [])
    assert group.due_in() == 0.0 and group.due()  # full
