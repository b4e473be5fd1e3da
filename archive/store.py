"""Writes and reads of one run's DuckDB archive.

The engine process owns the only read-write connection; every write is its
own committed transaction (a node with its files is one), so a crash loses at
most what was in flight; except that, while the scheduler runs, finished
evaluations are group-committed (`group_commits`, archive/group_commit.py):
a crash then also loses the last few milliseconds of results, which a resume
measures again. Reads return plain tuples and dicts: the archive
knows nothing of policies, LLMs or sandboxes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from archive.bulk import BulkWrites
from archive.errors import (
    ArchiveDamaged,
    ArchiveError,
    ArchiveFull,
    ArchiveLocked,
    ArchiveSchemaError,
    is_disk_full,
    rollback,
)
from archive.group_commit import AGE_S as GROUP_AGE_S
from archive.group_commit import ROWS as GROUP_ROWS
from archive.group_commit import GroupCommit
from archive.live import INTERVAL_S as LIVE_INTERVAL_S
from archive.live import LiveCopy, live_file
from archive.reads_arena import ArenaReads
from archive.reads_evaluations import EvaluationReads
from archive.reads_llm import LLMReads
from archive.reads_nodes import NodeReads
from archive.reads_prompts import PromptReads
from archive.reads_report import ReportReads
from archive.reads_run import RunReads
from archive.reads_tables import TableReads
from archive.reads_traces import TraceReads
from archive.records import EvaluationRecord, LLMCallRecord, NodeRecord, ReferenceEvaluation
from archive.schema import MIGRATIONS, SCHEMA_VERSION, TABLES

ARCHIVE_FILE = "archive.duckdb"

Event = tuple[str, "int | None", "Mapping[str, Any] | None"]  # (kind, node_id, detail)


def utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def files_hash(files: Mapping[str, str]) -> str:
    """Hash of a whole file set: equal file sets, equal hashes."""
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(path.encode() + b"\0" + content_hash(files[path]).encode() + b"\n")
    return digest.hexdigest()


def archive_path(path: str | Path) -> Path:
    """A run folder or the archive file itself -> the archive file. A sweep's cell folder (its `run.toml` beside
    the one run folder its search made) stands for that run, so `clade runs show SWEEP/cells/<cell>` reads it."""
    p = Path(path)
    if not p.is_dir():
        return p
    if not (p / ARCHIVE_FILE).exists() and (p / "run.toml").is_file():
        runs = sorted(p.glob(f"*/{ARCHIVE_FILE}"))
        if len(runs) == 1:
            return runs[0]
    return p / ARCHIVE_FILE


DUCKDB_MAGIC = (8, b"DUCK")  # where every DuckDB database file says what it is


def _connect(path: Path):
    import duckdb

    try:
        return duckdb.connect(str(path))
    except duckdb.IOException as exc:
        text = str(exc)
        if is_disk_full(exc):
            raise ArchiveFull(f"no space left on the device holding {path.parent}") from None
        if "lock" in text.lower():
            raise ArchiveLocked(f"{path} is held by another running search; stop it first") from None
        raise unreadable(path, exc) from None
    except duckdb.Error as exc:
        raise unreadable(path, exc) from None


def unreadable(file: Path, exc: BaseException) -> ArchiveError:
    """Why DuckDB could not open `file`: a DuckDB file it cannot read is damaged (ArchiveDamaged, with what to do);
    anything else is no archive."""
    said = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    offset, magic = DUCKDB_MAGIC
    try:
        with open(file, "rb") as handle:
            head = handle.read(offset + len(magic))
    except OSError:
        head = b"?"
    if not head:  # cut to nothing: a disk that filled as it was made, a copy that failed
        return damaged(file, "the file is empty")
    if head[offset:] == magic:
        return damaged(file, said)
    return ArchiveError(f"{file} is not a readable archive ({said})")


def damaged(file: Path, said: str) -> ArchiveDamaged:
    return ArchiveDamaged(
        f"{file} is a damaged archive: DuckDB cannot read all of it ({said}). It cannot be repaired in place: "
        "restore the run from a snapshot if one was exported (clade snapshot restore SNAPSHOT FOLDER), or run "
        "the search again"
    )


def _has_table(con, name: str) -> bool:
    try:
        return bool(con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?", [name]).fetchone()[0])
    except Exception:  # noqa: BLE001 - the catalog itself unreadable: no verdict of a table
        return False


class Archive(
    NodeReads,
    EvaluationReads,
    LLMReads,
    ArenaReads,
    RunReads,
    ReportReads,
    TableReads,
    TraceReads,
    PromptReads,
    BulkWrites,
):
    """One run's archive. Use `create` for a new run and `open` to resume or read.

    The writes are here; the named reads live in topic mixins (archive/reads_*.py)."""

    def __init__(self, con, path: Path, run_id: str, live_as_of: datetime | None = None) -> None:
        self._db = con
        self._group: GroupCommit | None = None  # evaluations held back for one transaction (group_commits)
        self.path = path
        self.run_id = run_id
        self.live_as_of = live_as_of  # read from a running search's live copy (archive/live.py), made then
        self.read_from = live_file(path) if live_as_of else path  # the file this archive was read from
        self._live: LiveCopy | None = None
        self.writes = 0  # statements that changed the archive in this process: the live copy's "changed" mark
        self._reload_seq()

    # ----- opening -------------------------------------------------------
    @classmethod
    def create(cls, path: str | Path, run_id: str, config: Mapping[str, Any], seed: int) -> Archive:
        path = Path(path)
        if path.exists():
            raise ArchiveError(f"{path} already exists; refusing to overwrite it")
        path.parent.mkdir(parents=True, exist_ok=True)
        con = _connect(path)
        con.execute("BEGIN")
        con.execute(TABLES)
        con.execute(
            "INSERT INTO runs VALUES (?, ?, ?, ?, ?, 'running', ?)",
            [run_id, json.dumps(dict(config), sort_keys=True), SCHEMA_VERSION, int(seed), utcnow(), utcnow()],
        )
        con.execute("COMMIT")
        return cls(con, path, run_id)

    @classmethod
    def open(cls, path: str | Path, read_only: bool = False) -> Archive:
        file = archive_path(path)
        if not file.is_file():
            raise ArchiveError(f"{path} is not an archive (no {ARCHIVE_FILE} there)")
        if read_only:
            import duckdb

            try:
                con = duckdb.connect(str(file), read_only=True)
            except duckdb.Error as exc:
                msg = str(exc).splitlines()[0]
                if "lock" in msg.lower():
                    return cls._open_live(file)
                raise unreadable(file, exc) from None
        else:
            con = _connect(file)
        try:
            row = con.execute("SELECT id, schema_version FROM runs LIMIT 1").fetchone()
        except Exception as exc:
            has_runs = _has_table(con, "runs")
            con.close()
            if has_runs:  # the table is there, its blocks are not
                raise damaged(file, str(exc).splitlines()[0]) from None
            raise ArchiveError(f"{file} is not a Clade archive (no runs table)") from None
        if row is None:
            con.close()
            raise ArchiveError(f"{file} holds no run")
        if int(row[1]) > SCHEMA_VERSION:
            con.close()
            raise ArchiveSchemaError(
                f"{file} has schema version {row[1]}, newer than this Clade's {SCHEMA_VERSION}; upgrade Clade"
            )
        if not read_only:
            for statement in MIGRATIONS:
                con.execute(statement)
        return cls(con, file, str(row[0]))

    @classmethod
    def _open_live(cls, file: Path) -> Archive:
        """A running search holds `file`: its live copy, read-only, if the engine keeps one (archive/live.py)."""
        import duckdb

        copy = live_file(file)
        try:
            as_of = datetime.fromtimestamp(copy.stat().st_mtime, UTC)
            con = duckdb.connect(str(copy), read_only=True)
        except (OSError, duckdb.Error):  # no copy yet (the first is made within seconds), or an older engine
            raise ArchiveLocked(
                f"{file} is held by another running search that keeps no live copy yet; try again in a few seconds"
            ) from None
        row = con.execute("SELECT id FROM runs LIMIT 1").fetchone()
        if row is None:
            con.close()
            raise ArchiveLocked(f"{file} is held by another running search; its live copy holds no run yet")
        return cls(con, file, str(row[0]), live_as_of=as_of)

    def start_live_copy(self, interval: float = LIVE_INTERVAL_S) -> LiveCopy:
        """Keep a read-only copy beside the archive for readers while this process writes it (archive/live.py);
        `close()` stops it and removes the copy."""
        if self._live is None:
            self._live = LiveCopy(self._con, self.path, lambda: self.writes, interval)
            self._live.start()
        return self._live

    def full(self) -> ArchiveFull:
        """The one line a write that found the disk full ends in: where, that nothing stored is lost, how to go on."""
        folder = self.path.parent
        return ArchiveFull(
            f"no space left on the device holding {folder}: the run stopped there, everything it had stored is "
            f"kept; free space, then resume: clade search --resume {folder}"
        )

    def close(self) -> None:
        try:
            self.commit_group()
        finally:
            self._group = None
            if self._live is not None:
                self._live.stop()
                self._live = None
            self._db.close()

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----- group commit --------------------------------------------------------
    @contextmanager
    def group_commits(self, rows: int = GROUP_ROWS, age_s: float = GROUP_AGE_S) -> Iterator[GroupCommit]:
        """While inside: `add_evaluation` holds its rows back and commits them `rows` at a time, or once the oldest
        has waited `age_s` seconds (checked at each add and by `commit_if_due`, which the caller's loop runs when
        idle); any other read or write commits them first. On leaving, by any way out, they are committed.
        rows=1: every evaluation is its own transaction, as outside (the same statements)."""
        if self._group is not None:
            raise ArchiveError("group commit is already on for this archive")
        group = GroupCommit(rows, age_s) if rows > 1 else None
        self._group = group
        try:
            yield group or GroupCommit(1, 0.0)
        finally:
            try:
                self.commit_group()
            finally:
                self._group = None

    def commit_group(self) -> int:
        """Commit the evaluations held back, in one transaction, now; how many there were."""
        group = self._group
        if group is None or not group.pending:
            return 0
        self.writes += 1
        try:
            try:
                return group.write(self._db)
            except Exception as exc:
                if is_disk_full(exc):
                    raise self.full() from None  # the group's rows are undone: a resume measures them again
                raise
        except BaseException:
            self._reload_seq()
            raise

    def commit_due_in(self) -> float | None:
        """Seconds until the held-back evaluations must be committed; None when none are held back."""
        return None if self._group is None else self._group.due_in()

    def commit_if_due(self) -> int:
        """Commit the held-back evaluations if their group is full or old enough; how many were committed."""
        if self._group is not None and self._group.due():
            return self.commit_group()
        return 0

    def _settle(self) -> None:
        if self._group is not None and self._group.pending:
            self.commit_group()

    # ----- writes ----------------------------------------------------------
    def set_config(self, config: Mapping[str, Any]) -> None:
        """The run's configuration as last set (a resume may raise its budget): what a later resume reads."""
        self.writes += 1
        self._con.execute(
            "UPDATE runs SET config = ?, updated_at = ? WHERE id = ?",
            [json.dumps(dict(config), sort_keys=True), utcnow(), self.run_id],
        )

    def set_status(self, status: str) -> None:
        self.writes += 1
        self._con.execute("UPDATE runs SET status = ?, updated_at = ? WHERE id = ?", [status, utcnow(), self.run_id])

    def add_instances(self, rows: list[tuple[str, str, dict]]) -> None:
        with self._transaction() as con:
            con.executemany(
                "INSERT INTO instances (id, split, data) VALUES (?, ?, ?)", [(i, s, json.dumps(d)) for i, s, d in rows]
            )

    def add_arena_proposals(
        self,
        tester_id: int,
        arena_round: int,
        rows: Sequence[tuple[int, Any, str | None]],
        instance: tuple[str, dict] | None,
        event: Event | None = None,
    ) -> None:
        """A tester's proposals of one round (item, proposal, why refused or None) and, when the oracle
        confirmed any, the dev instance they make, with its provenance; one transaction."""
        with self._transaction(event) as con:
            instance_id = instance[0] if instance else None
            if rows:  # a tester may propose nothing in a round: its event is still stored
                con.executemany(
                    "INSERT INTO arena_proposals VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [
                        (
                            tester_id,
                            arena_round,
                            item,
                            json.dumps(proposal, default=repr),
                            reason is None,
                            reason,
                            instance_id if reason is None else None,
                        )
                        for item, proposal, reason in rows
                    ],
                )
            if instance is not None:
                con.execute(
                    "INSERT INTO instances (id, split, data, origin, tester_id, arena_round) "
                    "VALUES (?, 'dev', ?, 'arena', ?, ?)",
                    [instance_id, json.dumps(instance[1]), tester_id, arena_round],
                )

    @contextmanager
    def _transaction(self, event: Event | None = None) -> Iterator[Any]:
        """One committed transaction, with the event that explains it; all or nothing."""
        con = self._con
        con.execute("BEGIN")
        try:
            yield con
            if event is not None:
                self._insert_event(*event)
            con.execute("COMMIT")
            self.writes += 1
        except BaseException as exc:
            rollback(con)
            if is_disk_full(exc):
                raise self.full() from None
            self._reload_seq()
            raise

    def add_node(
        self,
        node: NodeRecord,
        files: Mapping[str, str],
        event: Event | None = None,
        steps: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        """Store a node with its files (and the event that made it) in one transaction;
        unchanged files are stored once. `steps`: the parent agent's trajectory while it made this node
        (a self-improving agent), stored as trajectory_steps of kind 'expansion'."""
        with self._transaction(event) as con:
            self._insert_steps(node.id, "expansion", None, 0, steps)
            con.execute(
                "INSERT INTO nodes (id, run_id, parent_id, depth, status, created_at, mutator, model, diff, code_hash, "
                "reason, description, note, role, recommendations_version, prompt_id) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    node.id,
                    self.run_id,
                    node.parent_id,
                    node.depth,
                    node.status,
                    utcnow(),
                    node.mutator,
                    node.model,
                    node.diff,
                    node.code_hash,
                    node.reason,
                    node.description,
                    node.note or None,
                    node.role,
                    node.recommendations_version,
                    node.prompt_id,
                ],
            )
            for path in sorted(files):
                text = files[path]
                digest = content_hash(text)
                con.execute("INSERT INTO blobs VALUES (?, ?) ON CONFLICT DO NOTHING", [digest, text])
                con.execute("INSERT INTO node_files VALUES (?, ?, ?)", [node.id, path, digest])

    def add_recommendations(self, version: int, written_at_nodes: int, text: str, llm_call_id: int | None) -> None:
        """Version `version` of the recommendations scratchpad (`--meta-recommendations`), written when the run
        had `written_at_nodes` nodes, with its `recommendations` event, in one transaction."""
        detail = {"version": version, "written_at_nodes": written_at_nodes, "llm_call": llm_call_id}
        with self._transaction(("recommendations", None, detail)) as con:
            con.execute(
                "INSERT INTO recommendations (run_id, version, written_at_nodes, text, llm_call_id, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [self.run_id, version, written_at_nodes, text, llm_call_id, utcnow()],
            )

    def add_prompt(
        self, prompt_id: int, parent_id: int | None, text: str, written_at_nodes: int, llm_call_id: int | None
    ) -> None:
        """A prompt of the population (`--evolve-prompts`): the built-in one (no parent, no call) or one a model
        wrote from `parent_id`, with its `prompt` event, in one transaction."""
        detail = {"prompt": prompt_id, "parent": parent_id, "written_at_nodes": written_at_nodes}
        with self._transaction(("prompt", None, detail)) as con:
            con.execute(
                "INSERT INTO prompts (id, run_id, parent_id, text, written_at_nodes, llm_call_id, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [prompt_id, self.run_id, parent_id, text, written_at_nodes, llm_call_id, utcnow()],
            )

    def add_evaluation(
        self, ev: EvaluationRecord, event: Event | None = None, steps: Sequence[Mapping[str, Any]] = ()
    ) -> None:
        """Store a finished evaluation (and its event, and the agent's trajectory) in one transaction; under
        `group_commits`, held back and committed with the ones that arrive with it."""
        group = self._group
        if group is not None:
            event_row = None if event is None else self._event_row(*event)
            trajectory = step_rows(ev.node_id, "evaluation", ev.instance_id, ev.repeat, steps)
            group.add(evaluation_row(ev), event_row, trajectory)
            if group.due():
                self.commit_group()
            return
        with self._transaction(event):
            self._insert_evaluation(ev)
            self._insert_steps(ev.node_id, "evaluation", ev.instance_id, ev.repeat, steps)

    def _insert_steps(
        self, node_id: int, kind: str, instance_id: str | None, repeat: int, steps: Sequence[Mapping[str, Any]]
    ) -> None:
        rows = step_rows(node_id, kind, instance_id, repeat, steps)
        if rows:
            self._con.executemany("INSERT INTO trajectory_steps VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def _insert_evaluation(self, ev: EvaluationRecord) -> None:
        self._con.execute(INSERT_EVALUATION, evaluation_row(ev))

    def add_reference(self, ref: ReferenceEvaluation) -> None:
        self.writes += 1
        self._con.execute(
            "INSERT INTO reference_evaluations VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [
                ref.agent,
                ref.instance_id,
                ref.split,
                float(ref.score),
                json.dumps(ref.metrics),
                ref.status,
                ref.runtime_s,
                ref.feedback,
            ],
        )

    def add_llm_call(self, call: LLMCallRecord) -> None:
        """Store one model call as soon as it returns: a crash after this never pays for it again."""
        self.writes += 1
        self._con.execute(
            "INSERT INTO llm_calls (id, node_id, purpose, model, request_hash, request, response, tokens_in, "
            "tokens_out, cost_usd, latency_s, error, created_at, instance_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                call.id,
                call.node_id,
                call.purpose,
                call.model,
                call.request_hash,
                json.dumps(call.request),
                None if call.response is None else json.dumps(call.response),
                call.tokens_in,
                call.tokens_out,
                call.cost_usd,
                call.latency_s,
                call.error,
                utcnow(),
                call.instance_id,
            ],
        )

    def add_event(self, kind: str, node_id: int | None = None, detail: Mapping[str, Any] | None = None) -> int:
        self.writes += 1
        return self._insert_event(kind, node_id, detail)

    @property
    def next_event_seq(self) -> int:
        """The sequence number the next event takes: it moves on with every event written, so a resumed run
        seeds its random state with it (a resume then draws differently from the session before)."""
        return self._next_seq

    def _reload_seq(self) -> None:
        row = self._db.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()
        self._next_seq = int(row[0]) + 1

    def _insert_event(self, kind: str, node_id: int | None, detail: Mapping[str, Any] | None) -> int:
        self._settle()  # a held-back event takes an earlier seq: it is committed first
        row = self._event_row(kind, node_id, detail)
        try:
            self._db.execute('INSERT INTO events (seq, "at", kind, node_id, detail) VALUES (?, ?, ?, ?, ?)', row)
        except BaseException:
            self._next_seq -= 1
            raise
        return int(row[0])

    def _event_row(self, kind: str, node_id: int | None, detail: Mapping[str, Any] | None) -> list[Any]:
        """An event's row, taking the next sequence number."""
        seq = self._next_seq
        self._next_seq += 1
        return [seq, utcnow(), kind, node_id, json.dumps(detail or {}, default=float)]

    # ----- reads -----------------------------------------------------------
    def config(self) -> dict:
        row = self._con.execute("SELECT config FROM runs WHERE id = ?", [self.run_id]).fetchone()
        return json.loads(row[0])

    def run_row(self) -> dict:
        cur = self._con.execute("SELECT * FROM runs WHERE id = ?", [self.run_id])
        names = [d[0] for d in cur.description]
        return dict(zip(names, cur.fetchone()))

    def events(self, kind: str | None = None) -> Iterator[tuple[int, str, int | None, dict]]:
        sql = "SELECT seq, kind, node_id, detail FROM events"
        params: list[Any] = []
        if kind is not None:
            sql += " WHERE kind = ?"
            params.append(kind)
        for seq, k, node_id, detail in self._con.execute(sql + " ORDER BY seq", params).fetchall():
            yield seq, k, node_id, json.loads(detail) if detail else {}

    def query(self, sql: str, params: list[Any] | None = None) -> list[tuple]:
        """Rows of any SQL over the public tables, as a user would run it (the engine asks named methods)."""
        return self._con.execute(sql, params or []).fetchall()


INSERT_EVALUATION = "INSERT INTO evaluations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"


def evaluation_row(ev: EvaluationRecord) -> list[Any]:
    """An evaluation as its `evaluations` row."""
    return [
        ev.node_id,
        ev.instance_id,
        ev.split,
        ev.repeat,
        float(ev.score),
        json.dumps(ev.metrics),
        ev.status,
        ev.runtime_s,
        ev.stdout_tail,
        ev.stderr_tail,
        ev.feedback,
        ev.worker,
        ev.started_at,
        ev.finished_at,
    ]


STEP_TEXT = 2000  # characters of a step's action and result kept


def step_rows(
    node_id: int, kind: str, instance_id: str | None, repeat: int, steps: Sequence[Mapping[str, Any]]
) -> list[list[Any]]:
    """A trajectory's `trajectory_steps` rows."""
    return [[node_id, kind, instance_id, repeat, *step_row(i, step)] for i, step in enumerate(steps)]


def step_row(index: int, step: Mapping[str, Any]) -> list[Any]:
    """A trajectory step as the agent reported it (untrusted: every field coerced and bounded)."""

    def number(key: str, kind=int):
        try:
            value = kind(step.get(key) or 0)
        except (TypeError, ValueError, OverflowError):
            return kind(0)
        if kind is int:
            return max(0, min(value, 2**62))
        return value if value == value and abs(value) < 1e12 else 0.0

    def text(key: str) -> str:
        value = step.get(key, "")
        return (value if isinstance(value, str) else json.dumps(value, default=str))[:STEP_TEXT]

    return [
        index,
        text("tool")[:64],
        text("action"),
        number("tokens_in"),
        number("tokens_out"),
        number("time_s", float),
        text("result"),
    ]


def record_dict(record: Any) -> dict:
    """A record (one of archive.records' dataclasses) as a plain dict (for JSON output and tests)."""
    return asdict(record)
