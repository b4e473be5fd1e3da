"""Read-only questions asked of one run's archive, shared by `python -m engine.runs` and the plots.

Everything here opens the archive read-only and returns plain numbers: no
rendering, no writes. Definitions that the CLI and the plots must agree on
live here, once, or in the archive's named reads that they all call:

- a node's *mean* is its own mean dev score (holdout never counts;
  `Archive.dev_node_stats`);
- the *final node* is the node of the run's last `select_final` event;
- the *best mean* is the highest mean among nodes evaluated on every dev
  instance of the run (so a lucky node with one evaluation does not win);
- a stored `running` read from an archive no search holds is shown as
  `stopped (killed?)`; read from a running search's live copy, as `running
  (live, as of 3 s ago)`;
- the *wall time* is how long the engine ran, summed over the run's sessions
  (`Archive.wall_seconds`).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from archive import Archive, ArchiveError, archive_path
from archive.live import copy_age
from archive.records import NodeStats
from archive.store import damaged

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
            head = fh.read(12)
        if not head:  # cut to nothing (a disk that filled as it was made, a copy that failed)
            raise damaged(file, "the file is empty")
        if head[8:12] != b"DUCK":  # every DuckDB file has its magic bytes here
            raise ArchiveError(f"{file} is not an archive (not a DuckDB file)")
    return Archive.open(p, read_only=True)


def live_status(path: str | Path) -> str | None:
    """'<run> is running: live, as of 3 s ago' when `path` is a running search read from its live copy, else
    None: what a reader prints beside figures that will have moved on."""
    with open_read_only(path) as archive:
        if archive.live_as_of is None:
            return None
        return f"{archive.run_id} is running: drawn from its {live_note(archive.live_as_of)}"


def final_choice(archive: Archive) -> tuple[int, str] | None:
    """(node, rule) of the run's last `select_final` event, or None (a run stopped before its end)."""
    rows = list(archive.events("select_final"))
    if not rows:
        return None
    _, _, node, detail = rows[-1]
    return None if node is None else (int(node), str(detail.get("rule", "")))


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
