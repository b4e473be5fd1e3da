"""What the HTML report shows, read from a run's archive into plain JSON-ready dicts.

Bounded: every long text is clipped to its field's limit with a note saying
how much was cut (evaluation logs keep their end, everything else its start),
and once the report has embedded `TOTAL_CHARS` characters of such text, later
long fields are replaced by a note pointing at the archive. Definitions shared
with `python -m engine.runs` and the plots (a node's mean, the final node)
come from engine/runinfo/reading.py.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from datetime import datetime
from typing import Any

from archive import Archive
from engine.report.memory import memory_part
from engine.runinfo.reading import STEP_CHARS, STEPS_SHOWN, shown_status

# Characters kept per field; what is cut is said in the text.
LIMITS = {
    "diff": 30_000,
    "description": 4_000,
    "reason": 4_000,
    "message": 20_000,
    "answer": 20_000,
    "log": 4_000,
    "feedback": 4_000,
    "metrics": 2_000,
    "config": 2_000,
}
TOTAL_CHARS = 20_000_000  # text embedded over the whole report (about 20 MB of HTML at most)
TOTAL_STEPS = 20_000  # agents' trajectory steps embedded over the whole report (each at most ~700 characters)
BUCKETS = 20  # time buckets of "evaluations per worker over time"
_KEY = re.compile(r"^parent \d+ child \d+")


class Clipper:
    """Clips texts to their field's limit and keeps the whole report under TOTAL_CHARS."""

    def __init__(self, total: int = TOTAL_CHARS) -> None:
        self.left = total
        self.clipped = 0  # fields cut or left out

    def __call__(self, text: Any, field: str, keep: str = "head") -> str | None:
        if text is None:
            return None
        text = str(text)
        limit = LIMITS[field]
        if len(text) > limit:
            self.clipped += 1
            cut = len(text) - limit
            note = f"[... {cut:,} characters cut here; the whole text is in the archive]"
            text = f"{note}\n{text[-limit:]}" if keep == "tail" else f"{text[:limit]}\n{note}"
        if len(text) > 200:  # short texts are always kept: the budget is for the bulky ones
            if len(text) > self.left:
                self.clipped += 1
                return f"[{len(text):,} characters left out: the report's size limit is reached; see the archive]"
            self.left -= len(text)
        return text


def _iso(value: Any) -> str | None:
    return value.isoformat(sep=" ", timespec="seconds") if isinstance(value, datetime) else value


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _run_part(archive: Archive, clip: Clipper) -> dict[str, Any]:
    row = archive.run_row()
    config = _json(row["config"]) or {}
    shown = {
        k: (
            v
            if isinstance(v, (int, float, bool)) or v is None
            else clip(v if isinstance(v, str) else json.dumps(v, sort_keys=True), "config")
        )
        for k, v in sorted(config.items())
    }
    started, updated = row.get("created_at"), row.get("updated_at")
    wall = archive.wall_seconds()
    return {
        "id": row["id"],
        "status": shown_status(row["status"], archive.live_as_of),
        "stop_reason": archive.last_stop_reason() if row["status"] != "running" else "",
        "seed": row["seed"],
        "schema_version": row["schema_version"],
        "created_at": _iso(started),
        "updated_at": _iso(updated),
        "wall_s": wall,
        "config": shown,
        "task": config.get("task"),
        "policy": config.get("policy"),
        "budget": config.get("budget"),
    }


def _spend_part(archive: Archive) -> dict[str, Any]:
    llm = archive.llm_totals()
    evals = archive.evaluation_totals()
    refs = archive.reference_totals()
    return {
        "llm": {
            "calls": llm.calls,
            "errors": llm.errors,
            "tokens_in": llm.tokens_in,
            "tokens_out": llm.tokens_out,
            "cost_usd": llm.cost_usd,
            "unpriced": llm.unpriced,
        },
        "evaluations": [{"split": s, "status": st, "n": int(n), "runtime_s": float(t)} for s, st, n, t in evals],
        "references": {"n": int(refs[0]), "runtime_s": float(refs[1])},
        "sandbox_s": float(sum(t for *_, t in evals)) + float(refs[1]),
    }


def _calls_by_node(archive: Archive, clip: Clipper, about: list[int] | None = None) -> dict[int, list[dict[str, Any]]]:
    """Each node's model calls: those of the expansion that made it (matched by the expansion key of
    its `expand` event); calls whose child was never stored stay with the parent they were about.
    `about`: only the calls whose node_id is one of these (a node and its parent hold all of the node's)."""
    child_of_key = {}
    for _, _, _, detail in archive.events("expand"):
        if detail.get("key") and detail.get("child") is not None:
            child_of_key[str(detail["key"])] = int(detail["child"])
    out: dict[int, list[dict[str, Any]]] = defaultdict(list)
    rows = archive.llm_call_details(about)  # an agent's own calls name their instance
    for cid, node, purpose, model, request, response, t_in, t_out, cost, latency, error, created, inst in rows:
        request, response = _json(request) or {}, _json(response) or {}
        key = str(request.get("key", "")) if isinstance(request, dict) else ""
        match = _KEY.match(key)
        child = child_of_key.get(match.group(0)) if match else None
        owner = child if child is not None else node
        if owner is None:
            continue
        messages = request.get("messages", []) if isinstance(request, dict) else []
        answer = response.get("text") if isinstance(response, dict) else response
        out[int(owner)].append(
            {
                "id": int(cid),
                "purpose": purpose,
                "model": model,
                "key": key,
                "instance": inst,
                "tokens_in": t_in,
                "tokens_out": t_out,
                "cost_usd": cost,
                "latency_s": latency,
                "error": clip(error, "feedback"),
                "created_at": _iso(created),
                "of_parent": match is not None and child is None,  # an expansion whose child was never stored
                "messages": [
                    {"role": str(m.get("role", "")), "content": clip(m.get("content"), "message")}
                    for m in messages
                    if isinstance(m, dict)
                ],
                "answer": clip(answer if isinstance(answer, str) or answer is None else json.dumps(answer), "answer"),
            }
        )
    return out


def _evals_by_node(archive: Archive, clip: Clipper, about: list[int] | None = None) -> dict[int, list[dict[str, Any]]]:
    out: dict[int, list[dict[str, Any]]] = defaultdict(list)
    rows = archive.evaluation_details(about)
    for node, inst, split, rep, score, status, runtime, feedback, out_tail, err_tail, metrics, worker, at in rows:
        out[int(node)].append(
            {
                "instance": inst,
                "split": split,
                "repeat": rep,
                "score": score,
                "status": status,
                "runtime_s": runtime,
                "feedback": clip(feedback or None, "feedback"),
                "stdout": clip(out_tail or None, "log", keep="tail"),
                "stderr": clip(err_tail or None, "log", keep="tail"),
                "metrics": clip(metrics if metrics not in (None, "{}") else None, "metrics"),
                "worker": worker,
                "finished_at": _iso(at),
            }
        )
    return out


def _attach_steps(archive: Archive, nodes: list[dict[str, Any]], clip: Clipper, node: int | None = None) -> bool:
    """Give each evaluation its agent's steps (`steps`, `steps_more`: how many are not shown) and each node
    the steps its parent took while making it (`expansion_steps`, `expansion_more`); at most STEPS_SHOWN
    steps per trajectory, STEP_CHARS characters per action or result, TOTAL_STEPS over the report.
    False when the run has no trajectory (an older archive has no table for them)."""
    found = archive.trajectories(node, STEPS_SHOWN, STEP_CHARS)
    if not found:
        return False
    left = TOTAL_STEPS

    def bounded(key: tuple) -> tuple[list[dict], int]:
        nonlocal left
        steps, total = found.pop(key, ([], 0))
        if len(steps) > left:
            clip.clipped += 1
            steps = steps[: max(left, 0)]
        left -= len(steps)
        return steps, total - len(steps)

    for entry in nodes:
        nid = entry["id"]
        if (nid, "expansion", None, 0) in found:
            entry["expansion_steps"], entry["expansion_more"] = bounded((nid, "expansion", None, 0))
        for ev in entry["evaluations"]:
            key = (nid, "evaluation", ev["instance"], ev["repeat"])
            if key in found:
                ev["steps"], ev["steps_more"] = bounded(key)
    return True


def report_data(archive: Archive) -> dict[str, Any]:
    """Everything the page shows, as JSON-ready data (texts clipped, see LIMITS and TOTAL_CHARS)."""
    from engine.runinfo.reading import final_choice

    clip = Clipper()
    run = _run_part(archive, clip)
    spend = _spend_part(archive)
    stats = archive.dev_node_stats()
    final = final_choice(archive)
    evals = _evals_by_node(archive, clip)
    calls = _calls_by_node(archive, clip)
    nodes = node_rows(archive, clip, stats)
    for node in nodes:
        node["evaluations"], node["llm_calls"] = evals.get(node["id"], []), calls.get(node["id"], [])
    notes = archive.node_notes()
    for node in nodes:
        node["note"] = clip(notes[node["id"]], "description") if node["id"] in notes else None
    has_steps = _attach_steps(archive, nodes, clip)
    arena = _arena_part(archive, nodes)
    n_dev = archive.n_dev_instances()
    return {
        "run": run,
        "spend": spend,
        "nodes": nodes,
        "n_dev_instances": n_dev,
        "has_steps": has_steps,
        "final": None if final is None else {"node": final[0], "rule": final[1]},
        "clipped": clip.clipped,
        "arena": arena,
        "workers": _workers_part(archive),
        "prompt_memory": memory_part(archive),
    }


def node_rows(
    archive: Archive, clip: Clipper, stats: dict | None = None, about: list[int] | None = None, diff: bool = True
) -> list[dict[str, Any]]:
    """The nodes (or those in `about`) as the report's tree and panel know them, without their evaluations
    and calls: id, parent, children, status, how made, description, diff (`diff=False`: ""; the live page's
    tree polls without them), and own dev mean and count."""
    stats = archive.dev_node_stats() if stats is None else stats
    rows = archive.node_report_rows(about, diff)
    children: dict[int, list[int]] = defaultdict(list)
    for nid, parent in archive.node_parents().items():
        if parent is not None:
            children[parent].append(nid)
    nodes = []
    for nid, parent, depth, status, mutator, model, description, reason, change, created in rows:
        s = stats.get(int(nid))
        nodes.append(
            {
                "id": int(nid),
                "parent": None if parent is None else int(parent),
                "depth": int(depth),
                "status": status,
                "mutator": mutator,
                "model": model,
                "created_at": _iso(created),
                "description": clip(description or "", "description"),
                "reason": clip(reason or None, "reason"),
                "diff": clip(change or "", "diff"),
                "children": children.get(int(nid), []),
                "mean": None if s is None else s.mean,
                "n_dev": 0 if s is None else s.n,
            }
        )
    return nodes


def node_detail(archive: Archive, node: int) -> dict[str, Any] | None:
    """One node as the report's panel shows it (its evaluations, calls, note, steps) and what the panel needs
    beside it (its parent's evaluations, the final node...), read for this node only: what the live page
    fetches when a node is clicked. None when the run has no such node."""
    from engine.runinfo.reading import final_choice

    clip = Clipper()
    found = node_rows(archive, clip, about=[node])
    if not found:
        return None
    this = found[0]
    parent = this["parent"]
    about = [node] if parent is None else [node, parent]
    evals = _evals_by_node(archive, clip, about)
    this["evaluations"], this["llm_calls"] = evals.get(node, []), _calls_by_node(archive, clip, about).get(node, [])
    note = archive.node_notes([node]).get(node)
    this["note"] = None if note is None else clip(note, "description")
    _attach_steps(archive, [this], clip, node)
    _arena_part(archive, [this])
    final = final_choice(archive)
    has_steps = archive.has_trajectories()
    n_dev = archive.n_dev_instances()
    return {
        "node": this,
        "parent_evaluations": [] if parent is None else evals.get(parent, []),
        "n_dev_instances": n_dev,
        "has_steps": has_steps,
        "final": None if final is None else final[0],
    }


def _workers_part(archive: Archive) -> dict[str, Any] | None:
    """Evaluations per worker (a Ray node on a cluster) in BUCKETS equal slices of the run's span, by
    finished_at (else started_at), so an idle or late worker shows; None when there is no evaluation.
    An evaluation with neither timestamp counts only in its worker's total."""
    rows = archive.evaluation_worker_times()
    if not rows:
        return None
    starts = [s for _, s, _ in rows if s is not None] or [t for *_, t in rows if t is not None]
    ends = [t for *_, t in rows if t is not None]
    first, last = (min(starts), max(ends + starts)) if ends else (None, None)
    span = (last - first).total_seconds() if first is not None else 0.0
    edges = (
        []
        if first is None
        else [  # all equal when the span is zero
            (first + (last - first) * (i / BUCKETS)).isoformat(sep=" ", timespec="milliseconds")
            for i in range(BUCKETS + 1)
        ]
    )
    counts: dict[str, list[int]] = defaultdict(lambda: [0] * BUCKETS)
    totals: dict[str, int] = defaultdict(int)
    for worker, _, at in rows:
        totals[worker] += 1
        if at is not None and first is not None:
            index = int((at - first).total_seconds() / span * BUCKETS) if span > 0 else 0
            counts[worker][min(max(index, 0), BUCKETS - 1)] += 1
    return {
        "edges": edges,
        "buckets": BUCKETS,
        "rows": [{"worker": w, "total": totals[w], "counts": counts[w]} for w in sorted(totals)],
    }


def _arena_part(archive: Archive, nodes: list[dict[str, Any]]) -> dict[str, Any] | None:
    """An arena run (--arena): each node's role and its scores on the original dev set, the evolved one
    and holdout (a tester's: its mean share of agents broken), and the rounds; None for other runs."""
    from engine.arena import ledger

    if not ledger.is_arena(archive):
        return None
    scores = {s.node: s for s in ledger.node_scores(archive)}
    for node in nodes:
        s = scores[node["id"]]
        node["role"] = s.role
        node["arena"] = {"original": s.original, "evolved": s.evolved, "holdout": s.holdout, "tester": s.tester}
    return {
        "mode": archive.config().get("arena"),
        "rounds": ledger.rounds(archive),
        "instances": ledger.instance_counts(archive),
    }
