"""What the live page shows, read from the archives: the index's rows and one run's figures and charts.

Every function opens the archive read-only, reads, and closes it before it returns (a running search's
live copy is replaced every ~2 s: a reader never keeps it open). A run whose archive a search holds and
that has no live copy yet answers `locked` ("in use by a running search") instead of failing.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from archive import ArchiveError, ArchiveLocked
from engine.live import charts
from engine.live.sources import Sources

LOCKED = "in use by a running search"


def index_rows(sources: Sources) -> dict[str, Any]:
    """The `runs list` table of every run the server shows: columns, and per run its name and cells."""
    from engine.runinfo.info import RunInfo, list_runs
    from engine.runinfo.tables import LIST_COLUMNS, list_cells

    names = {folder.resolve(): name for name, folder in sources.runs().items()}
    rows = []
    for path in sources.paths:
        try:
            found = list_runs(path)
        except ArchiveError:  # a folder removed since the server started
            continue
        for r in found:
            name = names.get(Path(r.archive).parent.resolve())
            if name is None:
                continue
            live = isinstance(r, RunInfo) and r.live_as_of is not None
            state = (
                "live"
                if live
                else "finished"
                if isinstance(r, RunInfo) and r.status == "finished"
                else ("locked" if not isinstance(r, RunInfo) and r.locked else "other")
            )
            rows.append({"name": name, "cells": list_cells(r), "state": state})
    return {
        "columns": [c for c, _ in LIST_COLUMNS],
        "justify": [j for _, j in LIST_COLUMNS],
        "rows": rows,
        "sources": [str(p) for p in sources.paths],
    }


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def run_view(folder: Path, since: str | None = None) -> dict[str, Any]:
    """One run's page data: state (live, finished, stopped, locked), how fresh, counts, and the tree, score,
    worker and spend charts as markup. `since`: the version the page has; when nothing changed, only the
    state comes back (`unchanged`), so an idle page costs one small query."""
    from engine.runinfo.reading import open_read_only, shown_status

    now = datetime.now(UTC)
    try:
        archive = open_read_only(folder)
    except ArchiveLocked:
        return {
            "state": "locked",
            "status": LOCKED,
            "now": now.isoformat(),
            "version": "locked",
            "message": f"{folder.name} is {LOCKED} and has no live copy yet; this page shows it once it has",
        }
    except ArchiveError as exc:  # removed, or broken: said on the page, which keeps polling
        return {
            "state": "error",
            "status": "unreadable",
            "now": now.isoformat(),
            "version": "error",
            "message": str(exc),
        }
    with archive:
        live = archive.live_as_of
        version = "/".join(str(v) for v in archive.change_stamp())
        row = archive.run_row()
        stored = str(row.get("status", ""))
        state = (
            "live" if live is not None and stored == "running" else "finished" if stored == "finished" else "stopped"
        )
        head = {
            "state": state,
            "status": shown_status(stored, live),
            "stop_reason": archive.last_stop_reason() if stored != "running" else "",  # "stopped early: ..."
            "live_as_of": _iso(live),
            "now": now.isoformat(),
            "version": version,
            "run_id": archive.run_id,
        }
        if since == version:
            return {**head, "unchanged": True}
        return {**head, **_figures(archive, now if state == "live" else None)}


def _figures(archive, now: datetime | None) -> dict[str, Any]:
    from engine.report.data import Clipper, node_rows
    from engine.report.memory import memory_html, memory_part
    from engine.report.tree import legend_html, path_to, render_tree
    from engine.runinfo.reading import best_mean, final_choice

    config = archive.config()
    stats = archive.dev_node_stats()
    n_dev = archive.n_dev_instances()
    nodes = node_rows(archive, Clipper(), stats, diff=False)
    final = final_choice(archive)
    best = best_mean(stats, max(n_dev, 1))
    focus = final[0] if final else best[0] if best else None
    evals = archive.evaluation_timeline()
    dev = [(float(score), int(node), inst) for node, inst, split, score, *_ in evals if split == "dev"]
    purposes = archive.llm_spend_by_purpose()
    by_status = {s: sum(1 for n in nodes if n["status"] == s) for s in ("valid", "invalid", "failed")}
    lanes = [
        (w or "", start, end, None if score is None else float(score), status, int(node), inst)
        for node, inst, split, score, status, w, start, end in evals
    ]
    calls = [(p, int(c), int(f), int(i), int(o), float(d), int(u)) for p, c, f, i, o, d, u in purposes]
    return {
        "task": config.get("task"),
        "policy": config.get("policy"),
        "budget": config.get("budget"),
        "dev_evals": len(dev),
        "holdout_evals": sum(1 for e in evals if e[2] == "holdout"),
        "nodes": len(nodes),
        "nodes_by_status": by_status,
        "n_dev_instances": n_dev,
        "final": None if final is None else {"node": final[0], "rule": final[1]},
        "best": None if best is None else {"node": best[0], "mean": best[1]},
        "spend": {
            "calls": sum(c[1] for c in calls),
            "tokens_in": sum(c[3] for c in calls),
            "tokens_out": sum(c[4] for c in calls),
            "cost_usd": sum(c[5] for c in calls),
        },
        "html": {
            "legend": legend_html(nodes),
            "tree": render_tree(nodes, final[0] if final else None, path_to(nodes, focus)),
            "scores": charts.score_chart(dev, charts.best_so_far([(n, s) for s, n, _ in dev], n_dev)),
            "lanes": charts.worker_lanes(lanes, now),
            "calls": charts.purpose_table(calls),
            "memory": memory_html(memory_part(archive)),
        },
    }


def node_view(folder: Path, node: int) -> dict[str, Any] | None:
    """One node for the panel (engine.report.data.node_detail), or None when the run has no such node."""
    from engine.report.data import node_detail
    from engine.runinfo.reading import open_read_only

    with open_read_only(folder) as archive:
        return node_detail(archive, node)
