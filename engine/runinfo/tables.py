"""Rich tables of `RunInfo` for `python -m engine.runs` (pure rendering: no archive access)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from engine.runinfo.info import NodeInfo, RunInfo, Trajectory, Unreadable
from engine.runinfo.memory import memory_tables
from engine.words import plural


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _when(value: datetime | None) -> str:
    return "-" if value is None else value.strftime("%Y-%m-%d %H:%M:%S")


def _value(value) -> str:
    return "-" if value is None else str(value)


def _mean_n(pair: tuple[float | None, int]) -> str:
    return "-" if pair[0] is None else f"{pair[0]:.3f} (n={pair[1]})"


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{v} {k}" for k, v in counts.items()) or "none"


def _spend(info: RunInfo) -> str:
    s = info.spend
    if not s.calls:
        return "no model calls"
    return f"${s.dollars:.4f}, {plural(s.tokens_in, 'token')} in, {s.tokens_out} out, {plural(s.calls, 'call')}" + (
        f" ({s.failed} failed)" if s.failed else ""
    )


def _wall(info: RunInfo) -> str:
    return "-" if info.wall_s is None else f"{info.wall_s:.1f} s"


def _best(info: RunInfo) -> str:
    return "-" if info.best_node is None else f"{info.best_mean:.3f} (#{info.best_node})"


def resume_lines(rows: Sequence[RunInfo | Unreadable], one: bool = False) -> list[str]:
    """`Resume ...: command` for each unfinished run (`one`: a single run, so no run id)."""
    return [
        f"Resume{'' if one else ' ' + r.run_id}: {r.resume_command}"
        for r in rows
        if isinstance(r, RunInfo) and r.resume_command
    ]


# The columns of `runs list` (name, justify), and below each row's cells as plain text: the terminal's table
# and the live page's index (engine/live) both show these, so they never disagree.
Justify = Literal["left", "right"]
LIST_COLUMNS: tuple[tuple[str, Justify], ...] = (
    ("run", "left"),
    ("task", "left"),
    ("policy", "left"),
    ("status", "left"),
    ("budget", "right"),
    ("dev evals", "right"),
    ("best mean", "right"),
    ("final", "right"),
    ("final holdout", "right"),
    ("created", "left"),
)
LIST_STATUS = 3  # the column an unreadable run's reason goes in


def list_cells(r: RunInfo | Unreadable) -> list[str]:
    """One run's row of `runs list`, one plain string per LIST_COLUMNS entry."""
    if isinstance(r, Unreadable):
        cells = [r.name] + [""] * (len(LIST_COLUMNS) - 1)
        cells[LIST_STATUS] = r.reason
        return cells
    c = r.config
    return [
        r.run_id,
        str(c.get("task", "-")),
        str(c.get("policy", "-")),
        r.shown_status,
        str(c.get("budget", "-")),
        str(r.dev_evals),
        _best(r),
        "-" if r.final_node is None else f"#{r.final_node}",
        _num(r.final_holdout[0]),
        _when(r.created_at),
    ]


def list_table(rows: Sequence[RunInfo | Unreadable], title: str):
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, title_justify="left")
    for name, justify in LIST_COLUMNS:
        table.add_column(name, justify=justify, no_wrap=name in ("run", "created"))
    for r in rows:
        cells: list = list_cells(r)
        if isinstance(r, Unreadable):
            cells[LIST_STATUS] = Text(cells[LIST_STATUS], style="yellow")
        table.add_row(*cells)
    return table


def show_tables(info: RunInfo) -> list:
    from rich.table import Table

    facts = Table(title=f"Run {info.run_id}", title_justify="left", show_header=False)
    facts.add_column(style="bold", no_wrap=True)
    facts.add_column()
    final = "-"
    if info.final_node is not None:
        final = f"#{info.final_node}: dev {_mean_n(info.final_dev)}, holdout {_mean_n(info.final_holdout)}" + (
            f"; chosen by the {info.final_rule}" if info.final_rule else ""
        )
    for key, value in (
        ("archive", info.archive),
        (
            "status",
            info.shown_status + (f" ({info.stop_reason})" if info.stop_reason and info.status != "running" else ""),
        ),
        ("created", _when(info.created_at)),
        ("updated", _when(info.updated_at)),
        ("wall time", _wall(info)),
        ("nodes", f"{info.n_nodes}: {_counts(info.nodes_by_status)}"),
        (
            "dev evaluations",
            f"{info.dev_evals} of budget {info.config.get('budget', '-')}: {_counts(info.dev_by_status)}"
            + (f" ({info.failed_dev_evals} failed)" if info.failed_dev_evals else ""),
        ),
        ("holdout evaluations", str(info.holdout_evals)),
        ("dev instances", str(info.n_dev_instances)),
        ("best mean", f"{_best(info)} among nodes with all {plural(info.n_dev_instances, 'dev evaluation')}"),
        ("final node", final),
        ("final's change", info.final_description or "-"),
        ("LLM spend", _spend(info)),
    ):
        facts.add_row(key, value)
    config = Table(title="Config", title_justify="left", show_header=False)
    config.add_column(style="bold", no_wrap=True)
    config.add_column()
    for key in sorted(info.config):
        if info.config[key] is not None:
            config.add_row(key, _config_value(info, key))
    memory = memory_tables(info.memory) if info.memory is not None else []
    return [facts, config, *memory]


def _config_value(info: RunInfo, key: str) -> str:
    """A config value as the run used it: `workers 2 (one per core)`, not the `0` that was given."""
    given = info.config[key]
    shown = json.dumps(given) if not isinstance(given, str) else given
    used = info.used.get(key)
    if key == "workers" and used is not None and used != given:
        return f"{used} (one per core)" if not given else f"{used} (given {shown})"
    if key == "sandbox" and used and used != given:
        return f"{used} ({shown})"
    return shown


def compare_table(infos: Sequence[RunInfo]):
    from rich.table import Table

    table = Table(title="Runs side by side", title_justify="left")
    table.add_column("", style="bold", no_wrap=True)
    for info in infos:
        table.add_column(info.run_id, justify="right")
    rows: list[tuple[str, list[str]]] = [
        ("status", [i.shown_status for i in infos]),
        ("nodes", [f"{i.n_nodes}: {_counts(i.nodes_by_status)}" for i in infos]),
        ("dev evaluations", [str(i.dev_evals) for i in infos]),
        ("failed dev evaluations", [str(i.failed_dev_evals) for i in infos]),
        ("best mean (all dev)", [_best(i) for i in infos]),
        ("final node", ["-" if i.final_node is None else f"#{i.final_node}" for i in infos]),
        ("final dev mean", [_mean_n(i.final_dev) for i in infos]),
        ("final holdout mean", [_mean_n(i.final_holdout) for i in infos]),
        ("LLM spend", [_spend(i) for i in infos]),
        ("wall time", [_wall(i) for i in infos]),
    ]
    keys = sorted({k for i in infos for k in i.config})
    differing = [k for k in keys if len({json.dumps(i.config.get(k), sort_keys=True) for i in infos}) > 1]
    shown = [k for k in ("task", "policy", "mutator", "model", "seed", "budget") if k not in differing]
    config_rows = [(f"{k} (differs)", [_value(i.config.get(k)) for i in infos]) for k in differing]
    config_rows += [(k, [_value(i.config.get(k)) for i in infos]) for k in shown]
    rows = config_rows + rows
    for name, values in rows:
        table.add_row(name, *values)
    return table


def node_table(info: NodeInfo):
    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"Node #{info.node} of {info.run_id}", title_justify="left", show_header=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    rows = [
        ("parent", "- (the seed)" if info.parent is None else f"#{info.parent}"),
        ("status", info.status),
        ("depth", str(info.depth)),
        ("made by", info.mutator + (f" ({info.model})" if info.model else "")),
        ("dev mean", _mean_n(info.dev)),
        ("holdout mean", _mean_n(info.holdout)),
        ("evaluations", _counts(info.evaluations)),
        ("change", info.description or "-"),
    ]
    if info.reason:
        rows.append(("reason", info.reason))
    if info.arena is not None:
        rows.append(_arena_row(info.arena))
    version, prompt = info.prompted
    if version is not None:
        rows.append(("recommendations", f"version {version} (--meta-recommendations)"))
    if prompt is not None:
        rows.append(("prompt", f"#{prompt} (--evolve-prompts)"))
    rows.append(("files", ", ".join(info.files) or "-"))
    for key, value in rows:
        table.add_row(key, Text(_clean(value, 400)))  # Text: an agent's text is never read as markup
    return table


def _arena_row(scores) -> tuple[str, str]:
    def pct(value: float | None) -> str:
        return "-" if value is None else f"{100 * value:.1f}%"

    if scores.role == "tester":
        return ("arena tester", f"mean share of code agents its confirmed tests broke: {pct(scores.tester)}")
    return (
        "arena scores",
        f"original dev set {pct(scores.original)}, evolved dev set {pct(scores.evolved)}, "
        f"holdout {pct(scores.holdout)}",
    )


_CONTROL = str.maketrans({c: " " for c in map(chr, [*range(0, 32), 127])})


def _clean(text: str, limit: int) -> str:
    """One line of untrusted text for a terminal: control characters (escapes, newlines) as spaces, cut."""
    text = " ".join((text or "").translate(_CONTROL).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def step_line(step: dict, width: int = 60) -> str:
    """`  3 edit    path=... -> edited pkg/x.py  (120+40 tok, 0.8 s)`"""
    action, result = _clean(step["action"], width), _clean(step["result"], width)
    return (
        f"  {step['step']:>2} {_clean(step['tool'], 24):<7} {action or '-'} -> {result or '-'}  "
        f"({step['tokens_in']}+{step['tokens_out']} tok, {step['time_s']:.1f} s)"
    )


def _steps_lines(t: Trajectory, indent: str = "") -> list[str]:
    lines = [indent + step_line(s) for s in t.steps]
    if t.total > len(t.steps):
        lines.append(f"{indent}  ... {plural(t.total - len(t.steps), 'more step')} not shown (table trajectory_steps)")
    return lines


def trajectory_lines(info: NodeInfo) -> list[str]:
    """The node's improvement note, then its trajectories, compactly: per evaluation a header line and a line
    per step; then the steps its parent took while making it."""
    lines: list[str] = []
    if info.note:
        lines.append("improvement note (the review that planned this node's change):")
        lines += ["  " + _clean(line, 300) for line in info.note.strip().splitlines()[:40]]
    if info.expansion is None and not info.trajectories:
        return lines + ["No agent steps recorded for this node."]
    for t in info.trajectories:
        head = _clean(t.instance or "", 200) + (f" (repeat {t.repeat})" if t.repeat else "")
        if t.split is not None:
            head = f"{t.split} {head}: {t.status}, score {t.score:.3f}"
        lines.append(f"{head}, {t.total} step{'' if t.total == 1 else 's'}")
        lines += _steps_lines(t)
    if info.expansion is not None:
        lines.append(
            f"made by its parent's steps: #{info.parent}'s agent edited its own code into this node, "
            f"{info.expansion.total} step{'' if info.expansion.total == 1 else 's'}"
        )
        lines += _steps_lines(info.expansion)
    return lines
