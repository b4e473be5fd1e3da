"""Progress of runs as data: what `render_progress` draws (Optuna's "info" half).

For each run, with its dev evaluations in the order they finished (t = 1..T):

- best-so-far: the highest own mean dev score among nodes with at least k dev
  evaluations at t, k = every dev instance of the run unless `min_evals` says
  otherwise (a node evaluated on every instance has a final mean, so the
  curve never goes down; NaN until some node has k evaluations);
- final rule: the run's own final rule (its policy's `select_final`, e.g.
  HGM's highest 0.1-quantile of Beta(1+s, 1+f)) replayed on the tree as it
  stood at t, and the own mean dev score at t of the node it picks. Replayed
  at every evaluation up to `max_points` points, held flat between them. A
  noisy one-instance run (search.remeasure) has its re-runs on the axis too,
  and its final rule is the one its finale used: the highest mean over
  its runs so far among the nodes run at least twice;
- dollars: cumulative `llm_calls.cost_usd` of calls made by the time the
  t-th evaluation finished (all zero without an LLM).

`group_series` pools runs that share a config (all but the seed and other
per-run settings: the run folder, workers, budget, sandbox, ...) into a mean and
a band (mean +- one standard deviation across the runs, over the evaluations
every run of the group reached).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.runinfo.reading import open_read_only
from search.evidence import evidence_weight
from search.remeasure import pooled_variance

PER_RUN_KEYS = (
    "seed",
    "run_dir",
    "workers",
    "executor",
    "ray_address",
    "time_limit",
    "budget",
    "llm_concurrency",
    "replay",
    "max_cost",
    "max_tokens",
    "sandbox",
    "image",
)


@dataclass(frozen=True, eq=False)
class ProgressSeries:
    run_id: str
    path: str
    config: dict
    min_evals: int  # k of best-so-far
    final_rule: str  # the rule replayed for `final`
    evals: np.ndarray  # 1..T
    best: np.ndarray  # best-so-far mean dev score at t (NaN before a node has k evaluations)
    final: np.ndarray  # own mean at t of the node the final rule picks at t (NaN before any)
    final_node: np.ndarray  # that node (-1 before any)
    dollars: np.ndarray  # cumulative LLM dollars when the t-th evaluation finished

    @property
    def config_key(self) -> str:
        return json.dumps({k: v for k, v in self.config.items() if k not in PER_RUN_KEYS}, sort_keys=True)

    @property
    def has_cost(self) -> bool:
        return bool(len(self.dollars) and self.dollars[-1] > 0)


@dataclass(frozen=True, eq=False)
class ProgressGroup:
    label: str
    members: tuple[ProgressSeries, ...]
    evals: np.ndarray  # 1..L, L = the shortest member's T (empty for a single run)
    best_mean: np.ndarray
    best_sd: np.ndarray
    final_mean: np.ndarray
    final_sd: np.ndarray


def _policy(config: dict):
    """The run's policy with its stages and final rule, for its final rule; HGM's rule when this Clade
    does not know the policy (an archive of another version)."""
    from engine.config import RunConfig
    from search import make_policy

    try:
        return RunConfig.from_dict(config).search.make_policy()
    except ValueError:
        return make_policy("hgm")


def _final_rule_over_time(
    nodes: Sequence[tuple[int, int | None, str, object]],
    evals: list[tuple],
    n_dev: int,
    policy,
    budget: int | None,
    max_points: int,
    evidence: float = 1.0,
) -> tuple[np.ndarray, np.ndarray, str]:
    """Replay the tree (nodes in id order as (id, parent, status, created_at); dev evaluations in order)
    and ask the policy's final rule at up to `max_points` evaluations (`evidence`: the run's w, from its
    noise probe; search.evidence)."""
    from search.tree import TreeStats

    tree = TreeStats(max(n_dev, 0), capacity=max(len(nodes), 1))
    index: dict[int, int] = {}
    instance_index: dict[str, int] = {}
    t_total = len(evals)
    ask = set(np.unique(np.linspace(1, t_total, num=min(t_total, max_points)).round().astype(int)).tolist())
    rng = np.random.default_rng(0)
    final_mean = np.full(t_total, np.nan)
    final_node = np.full(t_total, -1, dtype=np.int64)
    rule, added, current = "", 0, (-1, np.nan)

    def add_upto(k: int) -> None:
        nonlocal added
        while added <= k and added < len(nodes):
            node, parent, status, _ = nodes[added]
            index[node] = tree.add_node(index.get(parent) if parent is not None else None, status == "valid")
            added += 1

    position = {n[0]: i for i, n in enumerate(nodes)}
    for t, (node, instance, score, finished) in enumerate(evals, start=1):
        while (
            added < len(nodes) and nodes[added][3] is not None and finished is not None and nodes[added][3] <= finished
        ):
            add_upto(added)
        add_upto(position[node])
        i = instance_index.setdefault(instance, len(instance_index))
        if i < tree.n_instances and not tree.is_tried(index[node], i):
            tree.finish_evaluation(index[node], i, score, started=False)
        if t in ask:
            choice = policy.select_final(tree.view(budget=budget, evidence=evidence), rng)
            if choice is not None:
                rule = choice.rule
                k = choice.node_id  # the tree's index; its archive id is nodes[k][0]
                current = (nodes[k][0], tree.mean(k))
        final_node[t - 1], final_mean[t - 1] = current
    return final_mean, final_node, rule


def _remeasured_over_time(evals: list[tuple], max_points: int) -> tuple[np.ndarray, np.ndarray, str]:
    """A noisy one-instance run's final rule (search.remeasure, whatever the policy) over its runs so far."""
    from search.remeasure import remeasured_final

    t_total = len(evals)
    ask = set(np.unique(np.linspace(1, t_total, num=min(t_total, max_points)).round().astype(int)).tolist())
    final_mean = np.full(t_total, np.nan)
    final_node = np.full(t_total, -1, dtype=np.int64)
    runs: dict[int, list[float]] = {}
    rule, current = "", (-1, np.nan)
    for t, (node, _, score, _) in enumerate(evals, start=1):
        runs.setdefault(int(node), []).append(float(score))
        variance = pooled_variance(runs)
        if t in ask and variance:
            choice = remeasured_final(runs, variance)
            if choice is not None:
                rule = choice.rule.split(" (noisy")[0] + " (noisy one-instance task)"
                current = (choice.node_id, float(choice.detail["mean"]))
        final_node[t - 1], final_mean[t - 1] = current
    return final_mean, final_node, rule


def _best_so_far(evals: list[tuple], k: int, n_dev: int) -> np.ndarray:
    """At each evaluation t: the highest own mean among nodes with at least k evaluations so far."""
    best = np.full(len(evals), np.nan)
    sums: dict[int, float] = {}
    counts: dict[int, int] = {}
    current = np.nan
    for t, (node, _, x, _) in enumerate(evals):
        sums[node] = sums.get(node, 0.0) + float(x)
        counts[node] = counts.get(node, 0) + 1
        if counts[node] >= k:
            mean = sums[node] / counts[node]
            if k >= n_dev or counts[node] == k:  # means of complete nodes no longer move
                current = mean if np.isnan(current) else max(current, mean)
            else:  # a node's mean may still move: take the maximum again
                current = max(sums[n] / counts[n] for n in counts if counts[n] >= k)
        best[t] = current
    return best


def _dollars_at(evals: list[tuple], calls: list[tuple]) -> np.ndarray:
    """Cumulative model dollars when each evaluation finished (all of them for one with no finish time)."""
    dollars = np.zeros(len(evals))
    if calls and len(evals):
        call_times = np.array([c[0] for c in calls], dtype="datetime64[us]")
        cumulative = np.cumsum([float(c[1]) for c in calls])
        finished = np.array([e[3] for e in evals], dtype="datetime64[us]")
        upto = np.searchsorted(call_times, finished, side="right")
        dollars = np.where(upto > 0, cumulative[np.maximum(upto - 1, 0)], 0.0)
        dollars[np.isnat(finished)] = cumulative[-1]
    return dollars


def progress_series(path: str | Path, min_evals: int | None = None, max_points: int = 400) -> ProgressSeries:
    """One run's progress (see the module's docstring for the definitions)."""
    with open_read_only(path) as archive:
        run_id, config = archive.run_id, archive.config()
        n_dev = archive.n_dev_instances()
        nodes = archive.node_timeline()
        probe = archive.dev_scores_by_repeat(0)
        runs: dict[int, list[float]] = {}
        for node, score in archive.scores_of_split("dev"):
            runs.setdefault(int(node), []).append(float(score))
        noisy = n_dev == 1 and bool(pooled_variance(runs))  # its repeats are budget evaluations: on the axis
        evals = archive.dev_evaluation_order(every_repeat=noisy)
        calls = archive.llm_cost_timeline()
    k = max(1, min_evals if min_evals is not None else n_dev)
    policy = _policy(config)
    evidence = 1.0  # a one-instance run's noise probe: the seed's runs (search.evidence, search.remeasure)
    if n_dev == 1 and len(probe) >= 2:
        evidence = evidence_weight(probe[0], pooled_variance({0: probe}))
    if noisy:
        final_mean, final_node, rule = _remeasured_over_time(evals, max_points)
    else:
        final_mean, final_node, rule = _final_rule_over_time(
            nodes, evals, n_dev, policy, config.get("budget"), max_points, evidence
        )
    return ProgressSeries(
        run_id=run_id,
        path=str(path),
        config=config,
        min_evals=k,
        final_rule=f"{policy.name}: {rule}" if rule else policy.name,
        evals=np.arange(1, len(evals) + 1),
        best=_best_so_far(evals, k, n_dev),
        final=final_mean,
        final_node=final_node,
        dollars=_dollars_at(evals, calls),
    )


def progress_data(
    paths: Sequence[str | Path], min_evals: int | None = None, max_points: int = 400
) -> list[ProgressSeries]:
    """The progress of each run (a run folder or archive file each), in the order given."""
    return [progress_series(p, min_evals, max_points) for p in paths]


def _differing(series: Sequence[ProgressSeries]) -> list[str]:
    keys = sorted({k for s in series for k in s.config if k not in PER_RUN_KEYS})
    return [k for k in keys if len({json.dumps(s.config.get(k), sort_keys=True) for s in series}) > 1]


def group_label(config: dict, differing: list[str]) -> str:
    shown = differing or ["task", "policy"]
    return " ".join(f"{k}={config.get(k)}" for k in shown if k not in ("instances", "agent")) or "runs"


def _mean_sd(arrays: list[np.ndarray], length: int) -> tuple[np.ndarray, np.ndarray]:
    stack = np.vstack([a[:length] for a in arrays])
    with np.errstate(invalid="ignore"):
        complete = ~np.isnan(stack).any(axis=0)
        mean = np.where(complete, np.nanmean(np.where(np.isnan(stack), 0.0, stack), axis=0), np.nan)
        sd = np.where(complete, stack.std(axis=0), np.nan)
    return mean, sd


def group_series(series: Sequence[ProgressSeries]) -> list[ProgressGroup]:
    """Runs grouped by config (first appearance order); a mean and band for groups of two or more."""
    differing = _differing(series)
    groups: dict[str, list[ProgressSeries]] = {}
    for s in series:
        groups.setdefault(s.config_key, []).append(s)
    out = []
    for members in groups.values():
        label = group_label(members[0].config, differing)
        if len(members) < 2:
            empty = np.zeros(0)
            out.append(ProgressGroup(label, tuple(members), np.zeros(0, dtype=int), empty, empty, empty, empty))
            continue
        length = min(len(m.evals) for m in members)
        best_mean, best_sd = _mean_sd([m.best for m in members], length)
        final_mean, final_sd = _mean_sd([m.final for m in members], length)
        out.append(
            ProgressGroup(
                f"{label} ({len(members)} runs)",
                tuple(members),
                np.arange(1, length + 1),
                best_mean,
                best_sd,
                final_mean,
                final_sd,
            )
        )
    return out
