"""A running search's archive for its readers: a consistent read-only copy the engine keeps fresh.

DuckDB lets one process open a database file for writing, and while it does
no other process may open the file at all, not even read-only. The engine
holds its run's archive for the whole search, so `runs list`, `runs show`,
the SQL command, the plots, the report and the live page would have nothing
to read until it ends.

The mechanism: while a search runs, a background thread of the engine copies
the archive into `archive.live.duckdb` beside it, at most every `interval`
seconds (2 s by default) and only when something was written since the last
copy (the archive counts its writes); when nothing changed, the copy's time
is moved on instead, since it is still the archive as of then. The copy is one statement, `COPY
FROM DATABASE`, on a cursor of its own: one read transaction, so it is a
consistent snapshot of committed rows while the engine goes on writing
(DuckDB's MVCC), and DuckDB runs it outside the GIL. It is written to a
temporary file and renamed over the previous copy, so a reader opens either
the previous copy or the new one, never half of one; a reader that has the
old one open keeps it (the rename does not touch its inode). When the
archive is locked, `Archive.open(read_only=True)` opens the copy instead and
says how old it is (`Archive.live_as_of`).

Why a copy rather than the engine answering readers itself (a socket, an
HTTP endpoint): every reader already speaks DuckDB SQL to a file, so each of
them works on a running search unchanged, and the engine's loop never waits
for a reader, however slow its query. The copy costs a background thread's
work every `interval` seconds, measured against a run without it by
`scripts/bench_live.py`. When the engine closes the archive it deletes the
copy: readers then read the archive itself. A copy left by a killed engine
is never read (the archive is not locked any more) and the next session
replaces or removes it.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from archive.errors import is_disk_full

log = logging.getLogger(__name__)

LIVE_FILE = "archive.live.duckdb"
INTERVAL_S = 2.0
FULL_PAUSE_S = 30.0  # after a copy found the disk full, how long copying waits
_ALIAS = "clade_live_copy"


def live_file(archive_file: Path) -> Path:
    """Where the live copy of `archive_file` is (beside it)."""
    return archive_file.parent / LIVE_FILE


def copy_age(as_of: datetime, now: datetime | None = None) -> str:
    """'3 s', '2 min 5 s': how old a live copy is, for 'live, as of 3 s ago'."""
    seconds = max(0, round(((now or datetime.now(UTC)) - as_of).total_seconds()))
    return f"{seconds} s" if seconds < 60 else f"{seconds // 60} min {seconds % 60} s"


def _sql_text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


class LiveCopy:
    """The background copier of one open archive. `changed()` returns something that differs whenever the
    archive was written to (its next event sequence number); `start()` once, `stop()` at the end."""

    def __init__(self, con, archive_file: Path, changed: Callable[[], object], interval: float = INTERVAL_S) -> None:
        self._cursor = con.cursor()  # a connection of its own to the same database, used only by the thread
        self._database = con.execute("SELECT current_database()").fetchone()[0]
        self.target = live_file(archive_file)
        self._changed = changed
        self.interval = interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._copied: object = None
        self._paused_until = 0.0
        self._said_full = False
        self.copies = 0
        self.seconds = 0.0  # time spent copying, for the benchmark

    def start(self) -> None:
        self._remove(self.target)  # a copy a killed engine left is stale
        self._thread = threading.Thread(target=self._run, name="clade-live-copy", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop copying and remove the copy: from now on readers read the archive itself."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._cursor.close()
        self._remove(self.target)

    def _run(self) -> None:
        while True:
            self.copy_if_changed()
            if self._stop.wait(self.interval):
                return

    def copy_if_changed(self) -> bool:
        """One copy if the archive changed since the last one; a failure is logged, never raised (a reader's
        view must not stop a search)."""
        if time.monotonic() < self._paused_until:  # the disk was full a moment ago: the archive's writes go first
            return False
        mark = self._changed()
        if mark == self._copied:  # nothing new: the copy is still the archive as of now, and says so
            try:
                os.utime(self.target)
            except OSError:
                pass
            return False
        started = time.perf_counter()
        temporary = self.target.with_name(self.target.name + ".tmp")
        try:
            self._remove(temporary)
            self._cursor.execute(f"ATTACH {_sql_text(str(temporary))} AS {_ALIAS}")
            try:
                self._cursor.execute(f'COPY FROM DATABASE "{self._database}" TO {_ALIAS}')
            finally:
                self._cursor.execute(f"DETACH {_ALIAS}")
            os.replace(temporary, self.target)
        except Exception as exc:  # noqa: BLE001 - a full disk or a DuckDB error: readers wait for the next copy
            self._remove(temporary)
            if is_disk_full(exc):  # the previous copy goes too: its space is the archive's now
                self._remove(self.target)
                self._paused_until = time.monotonic() + FULL_PAUSE_S
                if not self._said_full:
                    log.warning(
                        "no space left on the device holding %s: the live copy is paused (readers see the run "
                        "once the search ends, or once space is freed)",
                        self.target.parent,
                    )
                self._said_full = True
                return False
            log.warning("live copy of the archive failed: %s", str(exc).splitlines()[0] if str(exc) else exc)
            return False
        self._copied = mark
        self.copies += 1
        self.seconds += time.perf_counter() - started
        return True

    @staticmethod
    def _remove(path: Path) -> None:
        for p in (path, path.with_name(path.name + ".wal")):
            try:
                p.unlink()
            except FileNotFoundError:
                pass
