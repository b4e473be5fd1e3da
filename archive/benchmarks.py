"""SQL that only the benchmarks run (scripts/bench_scheduler.py), never the engine: a prefilled archive, and
other ways to commit what `Archive.add_evaluation` commits (an evaluation row and its event row), timed
against it to ask whether any honest trick makes a committed write cheaper."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from archive.group_commit import GroupCommit
from archive.records import EvaluationRecord
from archive.store import INSERT_EVALUATION, Archive, evaluation_row, utcnow

_INSERT_EVENT = 'INSERT INTO events (seq, "at", kind, node_id, detail) VALUES (?, ?, ?, ?, ?)'

Event = tuple[str, int, Mapping[str, Any]]  # (kind, node, detail)
Write = Callable[[Archive, EvaluationRecord, Event], None]


def prefill(archive: Archive, evaluations: int) -> None:
    """`evaluations` filler dev evaluations (16 per node, random scores) and as many `evaluate` events, then a
    checkpoint: an archive as large as a long run's, for timing writes into it."""
    if not evaluations:
        return
    con = archive._con
    con.execute(
        "INSERT INTO evaluations SELECT i // 16, 'prefill' || (i % 16), 'dev', 0, random(), "
        "'{\"bins\": 41}', 'ok', 0.1, repeat('x', 200), '', '', 'w0', TIMESTAMP '2025-01-01', "
        f"TIMESTAMP '2025-01-01' FROM range({int(evaluations)}) t(i)"
    )
    con.execute(
        "INSERT INTO events SELECT i + 1, TIMESTAMP '2025-01-01', 'evaluate', i // 16, "
        f'\'{{"t": 1, "theta": 0.5}}\' FROM range({int(evaluations)}) t(i)'
    )
    con.execute("CHECKPOINT")


def prepare(archive: Archive, setting: str | None = None) -> None:
    """Apply a DuckDB setting (e.g. "SET threads=1") to the archive's connection and prepare the statements
    `prepared` executes."""
    con = archive._con
    if setting:
        con.execute(setting)
    con.execute(
        "PREPARE put_eval AS INSERT INTO evaluations VALUES "
        "($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)"
    )
    con.execute(
        'PREPARE put_event AS INSERT INTO events (seq, "at", kind, node_id, detail) VALUES ($1, $2, $3, $4, $5)'
    )


def _rows(archive: Archive, ev: EvaluationRecord, event: Event) -> tuple[list[Any], list[Any]]:
    kind, node, detail = event
    seq = archive._next_seq
    archive._next_seq += 1
    return evaluation_row(ev), [seq, utcnow(), kind, node, json.dumps(dict(detail))]


def _literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if hasattr(value, "isoformat"):
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    return repr(value)


def executemany(archive: Archive, ev: EvaluationRecord, event: Event) -> None:
    """Both rows committed, with executemany of one row per table."""
    ev_row, event_row = _rows(archive, ev, event)
    con = archive._con
    con.execute("BEGIN")
    con.executemany(INSERT_EVALUATION, [ev_row])
    con.executemany(_INSERT_EVENT, [event_row])
    con.execute("COMMIT")


def prepared(archive: Archive, ev: EvaluationRecord, event: Event) -> None:
    """Both rows committed, through statements prepared once (`prepare`) and executed with literals."""
    ev_row, event_row = _rows(archive, ev, event)
    con = archive._con
    con.execute("BEGIN")
    con.execute("EXECUTE put_eval(" + ", ".join(map(_literal, ev_row)) + ")")
    con.execute("EXECUTE put_event(" + ", ".join(map(_literal, event_row)) + ")")
    con.execute("COMMIT")


def one_call(archive: Archive, ev: EvaluationRecord, event: Event) -> None:
    """Both rows committed in a single execute() of BEGIN..COMMIT."""
    ev_row, event_row = _rows(archive, ev, event)
    archive._con.execute(
        "BEGIN; INSERT INTO evaluations VALUES (" + ", ".join(map(_literal, ev_row)) + "); "
        'INSERT INTO events (seq, "at", kind, node_id, detail) VALUES ('
        + ", ".join(map(_literal, event_row))
        + "); COMMIT;"
    )


def rolled_back(archive: Archive, ev: EvaluationRecord, event: Event) -> None:
    """Not durable: the same inserts, rolled back."""
    ev_row, event_row = _rows(archive, ev, event)
    con = archive._con
    con.execute("BEGIN")
    con.execute(INSERT_EVALUATION, ev_row)
    con.execute(_INSERT_EVENT, event_row)
    con.execute("ROLLBACK")


def event_only(archive: Archive, ev: EvaluationRecord, event: Event) -> None:
    """One row: the event row alone, one statement, auto-committed."""
    archive._con.execute(_INSERT_EVENT, _rows(archive, ev, event)[1])


# ----- ways to write one group of evaluations (scripts/bench_cluster.py, part c) ---------------------------
Group = list[tuple[list[Any], list[Any]]]  # (evaluation row, event row) per evaluation


def group_rows(archive: Archive, evs: list[EvaluationRecord], event: Event) -> Group:
    """The rows of a group of evaluations, each with its event (sequence numbers taken in order)."""
    return [_rows(archive, ev, event) for ev in evs]


def group_executemany(archive: Archive, group: Group) -> None:
    """One transaction: executemany per table (DuckDB runs one INSERT per row)."""
    con = archive._con
    con.execute("BEGIN")
    con.executemany(INSERT_EVALUATION, [ev for ev, _ in group])
    con.executemany(_INSERT_EVENT, [event for _, event in group])
    con.execute("COMMIT")


def group_values(archive: Archive, group: Group) -> None:
    """One transaction: one multi-row INSERT ... VALUES (...), (...) per table."""
    con = archive._con
    width = len(group[0][0])
    con.execute("BEGIN")
    con.execute(
        "INSERT INTO evaluations VALUES " + ", ".join(["(" + ", ".join("?" * width) + ")"] * len(group)),
        [x for ev, _ in group for x in ev],
    )
    con.execute(
        'INSERT INTO events (seq, "at", kind, node_id, detail) VALUES ' + ", ".join(["(?, ?, ?, ?, ?)"] * len(group)),
        [x for _, event in group for x in event],
    )
    con.execute("COMMIT")


def group_unnest(archive: Archive, group: Group, held: GroupCommit) -> None:
    """One transaction as the engine writes a group (archive/group_commit.py): one unnested INSERT per table.
    `held`: the group buffer, kept from group to group as the engine keeps it (it reads the column types once)."""
    for ev, event in group:
        held.add(ev, event, [])
    held.write(archive._con)
