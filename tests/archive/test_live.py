"""The live copy (archive/live.py, issue 18): while a process holds an archive for writing, another process
reads a consistent copy of it, says how old it is, and never a half-written one; the copy goes when the writer
closes, and a copy a killed writer left is never read."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime

from archive import Archive, NodeRecord
from archive.live import LIVE_FILE, LiveCopy, copy_age
from archive.store import files_hash

READER = textwrap.dedent("""
    import json, sys
    from archive import Archive, ArchiveLocked
    try:
        with Archive.open(sys.argv[1], read_only=True) as a:
            nodes = [r[0] for r in a.query("SELECT id FROM nodes ORDER BY id")]
            files = a.query("SELECT count(*) FROM node_files")[0][0]
            print(json.dumps({"nodes": nodes, "files": files, "live": a.live_as_of is not None,
                              "status": a.run_row()["status"]}))
    except ArchiveLocked as exc:
        print(json.dumps({"locked": str(exc)}))
""")


def read_elsewhere(path) -> dict:
    """What another process reads of the archive at `path` (DuckDB's lock is per process)."""
    import json

    done = subprocess.run(
        [sys.executable, "-c", READER, str(path)], capture_output=True, text=True, timeout=60, check=True
    )
    return json.loads(done.stdout)


def add_node(archive: Archive, node_id: int) -> None:
    files = {"agent.py": f"def f():\n    return {node_id}\n"}
    archive.add_node(
        NodeRecord(
            id=node_id,
            parent_id=None if node_id == 0 else 0,
            depth=int(node_id > 0),
            status="valid",
            mutator="seed",
            code_hash=files_hash(files),
        ),
        files,
    )


def test_another_process_reads_the_live_copy_while_the_writer_holds_the_archive(tmp_path):
    path = tmp_path / "archive.duckdb"
    archive = Archive.create(path, "run-1", {}, 0)
    add_node(archive, 0)
    assert "locked" in read_elsewhere(path)  # no copy kept: held, as before
    live = archive.start_live_copy(interval=0.2)
    time.sleep(0.6)
    seen = read_elsewhere(path)
    assert seen["live"] and seen["nodes"] == [0] and seen["status"] == "running"
    for n in range(1, 4):
        add_node(archive, n)
    deadline = time.monotonic() + 10
    while read_elsewhere(path)["nodes"] != [0, 1, 2, 3]:
        assert time.monotonic() < deadline, "the copy never caught up"
        time.sleep(0.2)
    assert live.copies >= 2 and (tmp_path / LIVE_FILE).is_file()
    archive.close()
    assert not (tmp_path / LIVE_FILE).exists()  # the writer is gone: readers read the archive itself
    seen = read_elsewhere(path)
    assert not seen["live"] and seen["nodes"] == [0, 1, 2, 3]


def test_a_copy_is_whole_or_not_there_and_an_unchanged_archive_is_not_copied_again(tmp_path):
    path = tmp_path / "archive.duckdb"
    archive = Archive.create(path, "run-1", {}, 0)
    add_node(archive, 0)
    copier = LiveCopy(archive._con, path, lambda: archive.writes, interval=3600)
    assert copier.copy_if_changed() and not copier.copy_if_changed()  # nothing written in between
    first = (tmp_path / LIVE_FILE).stat().st_mtime_ns
    time.sleep(0.05)
    copier.copy_if_changed()
    assert (tmp_path / LIVE_FILE).stat().st_mtime_ns > first  # still current: its time moves on
    add_node(archive, 1)
    assert copier.copy_if_changed()
    assert not list(tmp_path.glob("*.tmp"))  # written aside, then renamed over the copy
    import duckdb

    con = duckdb.connect(str(tmp_path / LIVE_FILE), read_only=True)
    assert con.execute("SELECT count(*) FROM nodes").fetchone()[0] == 2
    assert con.execute("SELECT count(*) FROM node_files").fetchone()[0] == 2
    con.close()
    copier.stop()
    archive.close()


def test_a_copy_left_by_a_killed_writer_is_never_read(tmp_path):
    """kill -9 of the writer: the lock is gone with it, so readers open the archive, not the stale copy."""
    path = tmp_path / "archive.duckdb"
    script = textwrap.dedent(f"""
        import os, time
        from archive import Archive, NodeRecord
        a = Archive.create({str(path)!r}, "run-1", {{}}, 0)
        a.add_node(NodeRecord(id=0, parent_id=None, depth=0, status="valid", mutator="seed", code_hash="h"),
                   {{"agent.py": "x = 0\\n"}})
        a.start_live_copy(interval=0.1)
        time.sleep(0.5)
        a.add_node(NodeRecord(id=1, parent_id=0, depth=1, status="valid", mutator="seed", code_hash="i"),
                   {{"agent.py": "x = 1\\n"}})
        a.add_event("late")  # after the last copy it may have made
        os.kill(os.getpid(), 9)
    """)
    subprocess.run([sys.executable, "-c", script], timeout=60)
    assert (tmp_path / LIVE_FILE).is_file()
    with Archive.open(path, read_only=True) as archive:
        assert archive.live_as_of is None and archive.read_from == path
        assert [r[0] for r in archive.query("SELECT id FROM nodes ORDER BY id")] == [0, 1]
    with Archive.open(path) as archive:  # the next session replaces the stale copy when it starts its own
        archive.start_live_copy(interval=3600)
        assert archive.query("SELECT count(*) FROM events WHERE kind = 'late'")[0][0] == 1
    assert not (tmp_path / LIVE_FILE).exists()


def test_copy_age_reads_as_a_person_would_say_it():
    now = datetime(2026, 11, 26, 12, 0, 0, tzinfo=UTC)
    assert copy_age(datetime(2026, 11, 26, 11, 59, 57, tzinfo=UTC), now) == "3 s"
    assert copy_age(datetime(2026, 11, 26, 11, 57, 55, tzinfo=UTC), now) == "2 min 5 s"
    assert copy_age(datetime(2026, 11, 26, 12, 0, 5, tzinfo=UTC), now) == "0 s"  # a clock a little ahead


def test_without_a_copy_yet_a_held_archive_says_to_wait(tmp_path):
    path = tmp_path / "archive.duckdb"
    archive = Archive.create(path, "run-1", {}, 0)
    try:
        seen = read_elsewhere(path)
        assert "keeps no live copy yet" in seen["locked"]
    finally:
        archive.close()
