"""What `python -m engine.runs` says about a run, as data (rendering is in engine/runinfo/tables.py)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from archive import ArchiveError, ArchiveLocked
from archive.records import NodeStats
from archive.store import ARCHIVE_FILE
from engine.runinfo.memory import PromptMemory, read_memory
from engine.runinfo.reading import (
    STEP_CHARS,
    STEPS_SHOWN,
    best_mean,
    final_choice,
    open_read_only,
    shown_status,
)
from engine.words import plural


@dataclass(frozen=True)
class Spend:
    dollars: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    calls: int = 0
    failed: int = 0


@dataclass(frozen=True)
class RunInfo:
    run_id: str
    archive: str
    config: dict
    status: str
    created_at: datetime | None
    updated_at: datetime | None
    nodes_by_status: dict[str, int]
    dev_by_status: dict[str, int]
    holdout_evals: int
    n_dev_instances: int
    best_node: int | None  # highest mean among nodes evaluated on every dev instance
    best_mean: float | None
    final_node: int | None  # from the run's select_final event
    final_rule: str
    final_dev: tuple[float | None, int]  # (mean, n)
    final_holdout: tuple[float | None, int]
    final_description: str
    spend: Spend = field(default_factory=Spend)
    wall_s: float | None = None  # engine time summed over sessions (Archive.wall_seconds)
    used: dict = field(default_factory=dict)  # what the last session ran with (workers, sandbox): its event
    live_as_of: datetime | None = None  # read from a running search's live copy (archive/live.py), made then
    stop_reason: str = ""  # why its last session stopped (its last `stop` event): "budget spent", "stopped early: ..."
    memory: PromptMemory | None = None  # --meta-recommendations, --evolve-prompts: what they wrote

    @property
    def shown_status(self) -> str:
        """The status to print: `running (live, as of 3 s ago)` for a running search."""
        return shown_status(self.status, self.live_as_of)

    @property
    def resume_command(self) -> str | None:
        """The command that continues the run, for any run not finished (interrupted, killed, ...) nor running."""
        if self.status == "finished" or self.live_as_of is not None:
            return None
        return f"clade search --resume {shlex.quote(str(Path(self.archive).parent))}"

    @property
    def dev_evals(self) -> int:
        return sum(self.dev_by_status.values())

    @property
    def failed_dev_evals(self) -> int:
        """Dev evaluations in any status but 'ok' (error, timeout, killed, bad_output, failed_in_evaluator)."""
        return self.dev_evals - self.dev_by_status.get("ok", 0)

    @property
    def n_nodes(self) -> int:
        return sum(self.nodes_by_status.values())


@dataclass(frozen=True)
class Unreadable:
    """A folder in a runs folder whose archive cannot be read now (locked by a running search, or broken)."""

    name: str
    archive: str
    reason: str
    locked: bool


def _as_dt(value) -> datetime | None:
    return value if isinstance(value, datetime) else None


def run_info(path: str | Path) -> RunInfo:
    """Everything `list`, `show` and `compare` print about the run at `path`, read-only."""
    with open_read_only(path) as archive:
        row = archive.run_row()
        config = archive.config()
        stats: dict[int, NodeStats] = archive.dev_node_stats()
        n_dev = archive.n_dev_instances()
        nodes = archive.node_status_counts()
        dev = archive.evaluation_status_counts("dev")
        holdout = archive.evaluation_count("holdout")
        choice = final_choice(archive)
        best = best_mean(stats, max(n_dev, 1))
        final = choice[0] if choice else None
        final_hold = archive.holdout_mean(final) if final is not None else (None, 0)
        description = _description(archive, final) if final is not None else ""
        money = archive.llm_totals()
        wall = archive.wall_seconds()
        sessions = list(archive.events("session"))
        used = sessions[-1][3] if sessions else {}
        stop_reason = archive.last_stop_reason()
        memory = read_memory(archive)
    s = stats.get(final) if final is not None else None
    return RunInfo(
        run_id=archive.run_id,
        archive=str(archive.path),
        config=config,
        status=str(row.get("status", "")),
        created_at=_as_dt(row.get("created_at")),
        updated_at=_as_dt(row.get("updated_at")),
        nodes_by_status={str(k): int(v) for k, v in nodes.items()},
        dev_by_status={str(k): int(v) for k, v in dev.items()},
        holdout_evals=holdout,
        n_dev_instances=n_dev,
        best_node=best[0] if best else None,
        best_mean=best[1] if best else None,
        final_node=final,
        final_rule=choice[1] if choice else "",
        final_dev=(s.mean, s.n) if s else (None, 0),
        final_holdout=final_hold,
        final_description=description,
        spend=Spend(money.cost_usd, money.tokens_in, money.tokens_out, money.calls, money.errors),
        wall_s=wall,
        used=used,
        live_as_of=archive.live_as_of,
        stop_reason=stop_reason,
        memory=memory,
    )


def _description(archive, node: int) -> str:
    """A node's description ('' for none, or no such node)."""
    found = archive.node(node)
    return (found.description or "") if found is not None else ""


def list_runs(folder: str | Path) -> list[RunInfo | Unreadable]:
    """Every run under `folder` (each subfolder with an archive; or `folder` itself if it is a run),
    oldest first; a run that cannot be read now is listed with the reason."""
    root = Path(folder)
    if not root.is_dir():
        raise ArchiveError(f"{folder} is not a folder of runs")
    candidates = (
        [root] if (root / ARCHIVE_FILE).is_file() else sorted(p for p in root.iterdir() if (p / ARCHIVE_FILE).is_file())
    )
    out: list[RunInfo | Unreadable] = []
    for run in candidates:
        try:
            out.append(run_info(run))
        except ArchiveLocked:
            out.append(Unreadable(run.name, str(run / ARCHIVE_FILE), "in use by a running search", True))
        except ArchiveError as exc:
            file = str(run / ARCHIVE_FILE)
            reason = str(exc).removeprefix(file).strip() or str(exc)
            out.append(Unreadable(run.name, file, reason, False))
    floor = datetime.min

    def when(r: RunInfo | Unreadable) -> tuple:
        return (r.created_at or floor, r.run_id) if isinstance(r, RunInfo) else (floor, r.name)

    return sorted(out, key=when)


def best_node(path: str | Path) -> tuple[RunInfo, int, str, dict[str, str], str]:
    """(info, node, why, files, description) of the node to hand a user: the final node, or, for a run
    stopped before its end, the best mean among fully evaluated nodes (else the seed)."""
    info = run_info(path)
    if info.final_node is not None:
        node, why = info.final_node, f"final node ({info.final_rule})" if info.final_rule else "final node"
    elif info.best_node is not None:
        node, why = (
            info.best_node,
            (
                f"best mean among nodes with all {plural(info.n_dev_instances, 'dev evaluation')} "
                "(the run chose no final node)"
            ),
        )
    else:
        node, why = 0, "the seed (no node has every dev evaluation yet, and the run chose no final node)"
    with open_read_only(path) as archive:
        files = archive.node_files(node)
        description = _description(archive, node)
    return info, node, why, files, description


@dataclass(frozen=True)
class Trajectory:
    """One agent's steps (the first STEPS_SHOWN, texts cut): on an instance, or its parent's making this node."""

    instance: str | None  # None: the expansion (the parent's steps while it edited itself into the node)
    repeat: int
    split: str | None
    status: str | None
    score: float | None
    steps: list[dict]
    total: int  # steps in the archive (more than len(steps) when some are not shown)


@dataclass(frozen=True)
class NodeInfo:
    """What `runs show RUN --node N` prints about one node."""

    run_id: str
    node: int
    parent: int | None
    depth: int
    status: str
    mutator: str
    model: str | None
    description: str
    reason: str | None
    dev: tuple[float | None, int]  # (mean, n)
    holdout: tuple[float | None, int]
    evaluations: dict[str, int]  # status -> count
    files: list[str]
    expansion: Trajectory | None
    trajectories: list[Trajectory]  # one per evaluation with steps, in instance order
    note: str | None = None  # the improvement note: the review that planned the change (--meta-steps diagnose,...)
    arena: object | None = None  # an arena run's scores of this node (engine.arena.ledger.NodeScores)
    prompted: tuple[int | None, int | None] = (None, None)  # (recommendations version, prompt id) it was made with


def node_info(path: str | Path, node: int) -> NodeInfo:
    """One node of the run at `path` and its agents' trajectories, read-only (ArchiveError: no such node)."""
    with open_read_only(path) as archive:
        found = archive.node(node)
        if found is None:
            last = archive.last_node_id()
            raise ArchiveError(
                f"run {archive.run_id} has no node {node}" + ("" if last is None else f" (its nodes are 0 to {last})")
            )
        parent, depth, status, mutator, model = found.parent_id, found.depth, found.status, found.mutator, found.model
        description, reason = found.description or "", found.reason
        stats = archive.dev_node_stats().get(node)
        hold = archive.holdout_mean(node)
        evals = archive.evaluations_of(node)
        files = list(archive.node_files(node))
        steps = archive.trajectories(node, STEPS_SHOWN, STEP_CHARS)
        note = archive.node_notes([node]).get(node)
        arena = _arena_scores(archive, node)
        prompted = archive.node_prompt_links().get(node, (None, None))
        run_id = archive.run_id
    by_status: dict[str, int] = {}
    for *_, st, _score in evals:
        by_status[st] = by_status.get(st, 0) + 1
    shown: list[Trajectory] = []
    for inst, rep, split, st, score in evals:
        if (node, "evaluation", inst, rep) in steps:
            got, total = steps.pop((node, "evaluation", inst, rep))
            shown.append(Trajectory(inst, int(rep), split, st, float(score), got, total))
    for (_, kind, where, rep), (got, total) in sorted(steps.items(), key=lambda kv: str(kv[0])):
        if kind == "evaluation":  # steps whose evaluation is not stored (should not happen): shown all the same
            shown.append(Trajectory(where, rep, None, None, None, got, total))
    made = steps.get((node, "expansion", None, 0))
    return NodeInfo(
        run_id=run_id,
        node=node,
        parent=None if parent is None else int(parent),
        depth=int(depth),
        status=str(status),
        mutator=str(mutator),
        model=model,
        description=description,
        reason=reason,
        dev=(stats.mean, stats.n) if stats else (None, 0),
        holdout=hold,
        evaluations=by_status,
        files=files,
        expansion=None if made is None else Trajectory(None, 0, None, None, None, made[0], made[1]),
        trajectories=shown,
        note=note,
        arena=arena,
        prompted=prompted,
    )


def _arena_scores(archive, node: int):
    """An arena run (--arena): this node's original / evolved / holdout (or tester) scores, else None."""
    from engine.arena import ledger

    if not ledger.is_arena(archive):
        return None
    return next(s for s in ledger.node_scores(archive) if s.node == node)
