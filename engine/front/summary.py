"""The end-of-run summary: computed from the archive alone (pure), then rendered with rich."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from archive import Archive
from engine.words import plural, plural_word
from tasks.base import SCORE_NOTE


@dataclass(frozen=True)
class AgentLine:
    label: str
    dev_mean: float | None
    dev_n: int
    dev_raw: float | None
    holdout_mean: float | None
    holdout_n: int
    holdout_raw: float | None


@dataclass(frozen=True)
class Summary:
    run_id: str
    archive: str
    run_dir: str
    stop_reason: str
    final_node: int | None
    final_rule: str
    agents: list[AgentLine]
    nodes_by_status: dict[str, int]
    dev_evaluations_by_status: dict[str, int]
    budget: int
    dev_done: int
    holdout_done: int
    raw_metric: str
    raw_metric_note: str = ""
    score_note: str = SCORE_NOTE  # a task's `score_note` overrides
    extra: dict = field(default_factory=dict)


def _line(label: str, rows: list[tuple[str, float, str | None]], task) -> AgentLine:
    """rows: (split, score, metrics JSON) of one agent."""
    out = {}
    for split in ("dev", "holdout"):
        scores = [r[1] for r in rows if r[0] == split]
        metrics = [json.loads(r[2]) for r in rows if r[0] == split and r[2]]
        raw = task.raw_value([m for m in metrics if m]) if metrics else None
        out[split] = (sum(scores) / len(scores) if scores else None, len(scores), raw)
    return AgentLine(label, *out["dev"], *out["holdout"])


def compute_summary(
    archive: Archive, task, final_node: int | None, final_rule: str, stop_reason: str, budget: int, spend=None
) -> Summary:
    agents = []
    if final_node is not None:
        agents.append(_line(f"final #{final_node}", archive.scores_and_metrics(final_node), task))
    best = archive.best_fully_measured_node()
    if best is not None and best not in (final_node, 0):
        line = _line(f"best dev #{best}", archive.scores_and_metrics(best), task)
        final_mean = agents[0].dev_mean if agents and agents[0].dev_mean is not None else -1.0
        if line.dev_mean is not None and line.dev_mean > final_mean + 5e-4:  # a difference the table can show
            agents.append(line)
    agents.append(_line("seed #0", archive.scores_and_metrics(0), task))
    for name in archive.reference_agents():
        agents.append(_line(f"{name} (reference)", archive.reference_scores_and_metrics(name), task))
    nodes = archive.node_status_counts()
    dev = archive.evaluation_status_counts("dev")
    holdout = archive.evaluation_count("holdout")
    return Summary(
        run_id=archive.run_id,
        archive=str(archive.path),
        run_dir=str(Path(archive.path).parent),
        stop_reason=stop_reason,
        final_node=final_node,
        final_rule=final_rule,
        agents=agents,
        nodes_by_status=nodes,
        dev_evaluations_by_status=dev,
        budget=budget,
        dev_done=sum(dev.values()),
        holdout_done=int(holdout),
        raw_metric=task.raw_metric,
        raw_metric_note=task.raw_metric_note,
        score_note=task.score_note,
        extra={
            **({"spend": spend} if spend is not None else {}),
            **noise_probe(archive),
            "rejected": rejected_children(archive),
            **seed_at_zero(archive, task),
        },
    )


REJECTIONS = (
    ("near-duplicate of node%", "near-duplicates"),
    ("duplicate of node%", "exact duplicates"),
    ("pyflakes:%", "name errors (pyflakes)"),
)


def rejected_children(archive: Archive) -> dict[str, int]:
    """Children refused before any sandbox, by why: near-duplicates, exact duplicates, pyflakes name errors."""
    counts = {}
    for pattern, label in REJECTIONS:
        n = archive.invalid_count(pattern)
        if n:
            counts[label] = int(n)
    return counts


def seed_at_zero(archive: Archive, task) -> dict:
    """The seed's first feedback when its raw metric is 0 on every dev evaluation it completed.

    A folder whose evaluator lacks a data file may return a score of 0 without saying why (one that reports
    an error is `failed_in_evaluator`, and such a seed stops the run): the run then compares every child with
    0, and nothing else says why."""
    rows = archive.seed_ok_dev_metrics()
    if not rows:
        return {}
    for metrics, _ in rows:
        raw = task.raw_value([json.loads(metrics)]) if metrics else None
        if raw is None or raw != 0:
            return {}
    return {"seed_zero": " ".join((rows[0][1] or "no feedback").split())[:300]}


def noise_probe(archive: Archive) -> dict:
    """A one-instance task's noise probe: the seed's runs on its dev instance, the evidence weight they give,
    and the re-measures of other nodes (search.remeasure), if probed."""
    from search.evidence import evidence_weight
    from search.remeasure import pooled_variance

    rows = archive.repeated_dev_scores()
    runs: dict[int, list[float]] = {}
    for node, _, score in rows:
        runs.setdefault(int(node), []).append(float(score))
    seed = runs.get(0, [])
    if len(seed) < 2:
        return {}
    variance = pooled_variance(runs)
    remeasures, candidates = archive.evaluate_event_counts(("re-measure",))
    return {"noise": (seed, evidence_weight(seed[0], variance), variance, (int(remeasures), int(candidates)))}


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _money(line) -> str:
    """One spend line: dollars, tokens in and out, calls."""
    return (
        f"${line.cost_usd:.4f}, {plural(line.tokens_in, 'token')} in, {line.tokens_out} out, "
        f"{plural(line.calls, 'call')}" + (f" ({line.failed} failed)" if line.failed else "")
    )


def render_summary(summary: Summary, console) -> None:
    """The summary a finished search prints: the final node, the agents' scores, the counts, the spend, and
    how to resume or query the run."""
    console.print()
    console.print(
        f"[bold]Run {summary.run_id}[/bold]: {summary.stop_reason}; "
        f"{summary.dev_done}/{summary.budget} dev evaluations, "
        f"{plural(summary.holdout_done, 'holdout evaluation')} on top"
    )
    if summary.final_node is None:
        console.print("No valid evaluated node to report.")
    else:
        console.print(f"Final node {summary.final_node}, chosen by the {summary.final_rule}")
    _render_agents(summary, console)
    _render_counts(summary, console)
    _render_noise(summary, console)
    _render_spend(summary, console)
    console.print(f"Archive: {summary.archive}", soft_wrap=True)
    console.print(f"Resume:  clade search --resume {summary.run_dir} [--budget N]", soft_wrap=True)
    query = "SELECT status, count(*) FROM nodes GROUP BY status"
    console.print(
        f'Query:   clade runs sql {shlex.quote(summary.run_dir)} "{query}"',
        soft_wrap=True,
        markup=False,
        highlight=False,
    )


def _render_agents(summary: Summary, console) -> None:
    """The table of the final node, the seed and the references: dev and holdout scores and raw metric."""
    from rich.table import Table

    table = Table(title=None, show_edge=False)
    raw = summary.raw_metric
    for name in ("agent", "dev score", "n", f"dev {raw}", "holdout score", "n", f"holdout {raw}"):
        table.add_column(name, justify="left" if name == "agent" else "right", no_wrap=name == "agent")
    for a in summary.agents:
        table.add_row(
            a.label,
            _fmt(a.dev_mean),
            str(a.dev_n),
            _fmt(a.dev_raw),
            _fmt(a.holdout_mean),
            str(a.holdout_n),
            _fmt(a.holdout_raw),
        )
    console.print(table)
    if summary.raw_metric_note:
        console.print(f"({summary.raw_metric_note}; {summary.score_note})")


def _render_counts(summary: Summary, console) -> None:
    """A seed that scored 0 everywhere, then the nodes and dev evaluations by status, and what was rejected."""
    if "seed_zero" in summary.extra:
        console.print(
            f"Warning: the seed scored {summary.raw_metric} = 0 on every dev evaluation (a missing data "
            f"file or an error the evaluator caught?): {summary.extra['seed_zero']}",
            soft_wrap=True,
            markup=False,
            highlight=False,
        )
    nodes = ", ".join(f"{v} {k}" for k, v in summary.nodes_by_status.items())
    by_status = summary.dev_evaluations_by_status
    evals = ", ".join(f"{v} {k}" for k, v in by_status.items())
    failed = sum(by_status.values()) - by_status.get("ok", 0)  # every status but ok, caught ones included
    if failed:
        evals += f": {failed} failed ({100 * failed / sum(by_status.values()):.0f} %)"
    console.print(f"Nodes: {nodes}. Dev evaluations: {evals}.")
    rejected = summary.extra.get("rejected")
    if rejected:
        console.print("Rejected before evaluation: " + ", ".join(f"{n} {label}" for label, n in rejected.items()) + ".")


def _render_noise(summary: Summary, console) -> None:
    """A one-instance task: what its noise probe found, and the re-measures it caused."""
    if "noise" not in summary.extra:
        return
    seed, w, variance, remeasured = summary.extra["noise"]
    kind = "noisy" if variance else "deterministic"
    scores = ", ".join(f"{x:.4f}" for x in seed[:-1]) + f" and {seed[-1]:.4f}"
    console.print(
        f"Noise probe: the seed's runs on its dev instance scored {scores} ({kind}), "
        f"so one evaluation counted as w = {w:g} pass/fail trials (search/evidence.py)."
    )
    if remeasured[0]:
        console.print(
            f"Re-measured for the final choice (search/remeasure.py): "
            f"{remeasured[0]} more {plural_word(remeasured[0], 'run')} of "
            f"{plural(remeasured[1], 'candidate')}; noise variance {variance:.3g} per run."
        )


def _render_spend(summary: Summary, console) -> None:
    spend = summary.extra.get("spend")
    if spend is None:
        return
    console.print(
        f"LLM spend: {_money(spend.total)}"
        + (f", {plural(spend.cached, 'answer')} from the archive" if spend.cached else "")
    )
    for title, lines in (("by purpose", spend.by_purpose), ("by model", spend.by_model)):
        if lines:
            console.print(f"  {title}: " + "; ".join(f"{k} {_money(v)}" for k, v in sorted(lines.items())))
