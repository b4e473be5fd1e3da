"""Read-only questions asked of one run's archive, shared by `python -m engine.runs` and the plots.

Everything here opens the archive read-only and returns plain numbers: no
rendering, no writes. Definitions that the CLI and the plots must agree on
live here, once:

- a node's *mean* is its own mean dev score (holdout never counts);
- the *final node* is the node of the run's last `select_final` event;
- the *best mean* is the highest mean among nodes evaluated on every dev
  instance of the run (so a lucky node with one evaluation does not win);
- a stored `running` read from an archive no search holds is shown as
  `stopped (killed?)`; read from a running search's live copy, as `running
  (live, as of 3 s ago)`;
- the *wall time* is how long the engine ran, summed over the run's sessions.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from archive import Archive, ArchiveError, archive_path
from archive.live import copy_age

KILLED = "stopped (killed?)"


def shown_status(stored: str, live_as_of: datetime | None = None) -> str:
    """The run's status as a reader says it. A running search holds its archive for writing, and readers
    then read its live copy (archive/live.py, `live_as_of` its time): `running (live, as of 3 s ago)`. An
    archive that opened itself read-only has no live search: a stored `running` means the search died
    without writing its end (kill -9, a crash, a power cut)."""
    if stored == "running":
        return f"running ({live_note(live_as_of)})" if live_as_of is not None else KILLED
    return stored


def live_note(live_as_of: datetime) -> str:
    """'live, as of 3 s ago': how fresh a running search's figures are."""
    return f"live, as of {copy_age(live_as_of)} ago"


def open_read_only(path: str | Path) -> Archive:
    """A run folder or its `archive.duckdb` -> the archive, read-only (ArchiveError in one line otherwise)."""
    p = Path(path)
    if not p.exists():
        raise ArchiveError(f"{path} does not exist (give a run folder or its archive.duckdb)")
    file = archive_path(p)
    if file.is_file():
        with open(file, "rb") as fh:
            if fh.read(12)[8:12] != b"DUCK":  # every DuckDB file has its magic bytes here
                raise ArchiveError(f"{file} is not an archive (not a DuckDB file)")
    return Archive.open(p, read_only=True)


def live_status(path: str | Path) -> str | None:
    """'<run> is running: live, as of 3 s ago' when `path` is a running search read from its live copy, else
    None: what a reader prints beside figures that will have moved on."""
    with open_read_only(path) as archive:
        if archive.live_as_of is None:
            return None
        return f"{archive.run_id} is running: drawn from its {live_note(archive.live_as_of)}"


@dataclass(frozen=True)
class NodeStats:
    """One node's own dev numbers."""

    mean: float | None  # None until the node has a dev evaluation
    n: int  # dev evaluations
    n_failed: int  # dev evaluations whose status is not 'ok'


def dev_node_stats(archive: Archive) -> dict[int, NodeStats]:
    rows = archive.query(
        "SELECT node_id, avg(score), count(*), count(*) FILTER (WHERE status <> 'ok') "
        "FROM evaluations WHERE split = 'dev' GROUP BY node_id"
    )
    return {int(n): NodeStats(float(m), int(c), int(f)) for n, m, c, f in rows}


def holdout_mean(archive: Archive, node: int) -> tuple[float | None, int]:
    mean, n = archive.query(
        "SELECT avg(score), count(*) FROM evaluations WHERE split = 'holdout' AND node_id = ?", [node]
    )[0]
    return (None if mean is None else float(mean)), int(n)


def n_dev_instances(archive: Archive) -> int:
    return int(archive.query("SELECT count(*) FROM instances WHERE split = 'dev'")[0][0])


def final_choice(archive: Archive) -> tuple[int, str] | None:
    """(node, rule) of the run's last `select_final` event, or None (a run stopped before its end)."""
    rows = list(archive.events("select_final"))
    if not rows:
        return None
    _, _, node, detail = rows[-1]
    return None if node is None else (int(node), str(detail.get("rule", "")))


# A session begins with a `start` or `resume` event and ends with the last thing it wrote before the next
# one began; a snapshot's `restore` is bookkeeping, not work, so an idle gap before it does not count.
_WALL_SQL = """
WITH sessions AS (
    SELECT "at" AS began, lead("at") OVER (ORDER BY seq) AS next_began FROM events WHERE kind IN ('start', 'resume')),
activity AS (
    SELECT "at" AS t FROM events WHERE kind <> 'restore'
    UNION ALL SELECT finished_at FROM evaluations
    UNION ALL SELECT created_at FROM llm_calls
    UNION ALL SELECT created_at FROM nodes
    UNION ALL SELECT updated_at FROM runs),
spans AS (
    SELECT s.began, max(a.t) AS ended FROM sessions s JOIN activity a
    ON a.t >= s.began AND (s.next_began IS NULL OR a.t < s.next_began) GROUP BY s.began)
SELECT sum(epoch_ms(ended) - epoch_ms(began)) / 1000.0 FROM spans
"""


def wall_seconds(archive: Archive) -> float | None:
    """The run's wall time: how long the engine was running, summed over its start and every resume
    (not the idle time between them). The one definition `runs show`, `compare` and the report use."""
    value = archive.query(_WALL_SQL)[0][0]
    return None if value is None else float(value)


def best_mean(stats: dict[int, NodeStats], min_evals: int) -> tuple[int, float] | None:
    """(node, mean) with the highest mean among nodes with at least `min_evals` dev evaluations;
    ties go to the older node."""
    best: tuple[int, float] | None = None
    for node in sorted(stats):
        s = stats[node]
        if s.mean is not None and s.n >= min_evals and (best is None or s.mean > best[1]):
            best = (node, s.mean)
    return best


# ----- trajectories: a coding agent's steps (table trajectory_steps; absent from older archives) ----------

STEPS_SHOWN = 50  # steps kept per trajectory by the report and `runs show --node`
STEP_CHARS = 300  # characters kept of a step's action and of its result


def has_table(archive: Archive, name: str) -> bool:
    """Whether the archive has table `name` (an archive older than the table, opened read-only, has not)."""
    return bool(archive.query("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [name])[0][0])


def node_notes(archive: Archive, node: int | None = None) -> dict[int, str]:
    """Improvement notes by node (one node's, or every node's); {} for an archive older than the column."""
    present = archive.query(
        "SELECT count(*) FROM information_schema.columns WHERE table_name = 'nodes' AND column_name = 'note'"
    )[0][0]
    if not present:
        return {}
    where = "" if node is None else f" AND id = {int(node)}"
    return {int(n): text for n, text in archive.query(f"SELECT id, note FROM nodes WHERE note <> ''{where}")}


def _excerpt(text: str | None, full: int | None, limit: int) -> str:
    text = text or ""
    more = (full or 0) - limit
    return f"{text}… [{more:,} more characters]" if more > 0 else text


def trajectories(
    archive: Archive, node: int | None = None, max_steps: int = STEPS_SHOWN, max_chars: int = STEP_CHARS
) -> dict[tuple[int, str, str | None, int], tuple[list[dict], int]]:
    """{(node, kind, instance, repeat): (first steps, number of steps)}: each trajectory's first `max_steps`
    steps in order, their action and result cut to `max_chars` characters (the cut said in the text), for one
    node or all. Kind 'evaluation': the node's agent on one instance (one per repeat); 'expansion' (instance
    None): the steps its parent took while it edited itself into this node. Empty without the table."""
    if not has_table(archive, "trajectory_steps"):
        return {}
    where, params = ("WHERE node_id = ?", [int(node)]) if node is not None else ("", [])
    rows = archive.query(
        'SELECT node_id, kind, instance_id, "repeat", step, tool, substr(action, 1, ?), length(action), '
        "substr(result, 1, ?), length(result), tokens_in, tokens_out, time_s, n FROM ("
        'SELECT *, row_number() OVER (PARTITION BY node_id, kind, instance_id, "repeat" ORDER BY step) AS k, '
        'count(*) OVER (PARTITION BY node_id, kind, instance_id, "repeat") AS n '
        f"FROM trajectory_steps {where}) WHERE k <= ? "
        'ORDER BY node_id, kind, instance_id NULLS FIRST, "repeat", step',
        [max_chars, max_chars, *params, max_steps],
    )
    out: dict[tuple[int, str, str | None, int], tuple[list[dict], int]] = {}
    for nid, kind, inst, rep, step, tool, action, n_action, result, n_result, t_in, t_out, secs, n in rows:
        key = (int(nid), str(kind), inst, int(rep))
        steps = out.setdefault(key, ([], int(n)))[0]
        steps.append(
            {
                "step": int(step),
                "tool": tool or "",
                "action": _excerpt(action, n_action, max_chars),
                "result": _excerpt(result, n_result, max_chars),
                "tokens_in": int(t_in or 0),
                "tokens_out": int(t_out or 0),
                "time_s": float(secs or 0.0),
            }
        )
    return out
