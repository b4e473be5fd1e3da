"""A synthetic run archive of any size, for benchmarks and tests of what reads archives.

`synthetic_archive(path, n_nodes)` writes a real archive (the schema of
`archive.schema`, through `Archive.create`) that looks like an HGM search:
children of good nodes are picked more often, scores drift from the parent,
about 10 % of children are invalid and 4 % failed, most nodes get one or two
dev evaluations and a few many, some evaluations end in errors or timeouts,
each expansion is one priced LLM call, and the run ends with a
`select_final` event and holdout evaluations of the final node and the seed.
Rows go in with a few bulk inserts (`Archive.add_rows`: lists unnested in
SQL), so 2,000 nodes take well under a second. Deterministic for a seed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from archive import Archive

_T0 = datetime(2025, 1, 1, 12, 0, 0)
_EVAL_KEYS = ("node", "inst", "split", "score", "status", "feedback", "start", "end")


@dataclass
class _Tree:
    parents: list[int | None]
    status: list[str]
    quality: list[float]
    depth: list[int]


@dataclass
class _Run:
    """What happened, as lists: evaluations column by column, nodes' times, calls and events."""

    ev: dict[str, list] = field(default_factory=lambda: {k: [] for k in _EVAL_KEYS})
    nodes_at: list[datetime] = field(default_factory=list)
    calls: list[tuple[int, datetime, float]] = field(default_factory=list)  # (node, time, dollars)
    events: list[tuple] = field(default_factory=list)  # (kind, node, detail, time)
    clock: datetime = _T0


def _grow(n_nodes: int, rng: np.random.Generator) -> _Tree:
    """An HGM-like tree: good nodes picked more often, qualities drifting from the parent."""
    parents: list[int | None] = [None]
    status, quality, n_children = ["valid"], [0.5], [0]
    for i in range(1, n_nodes):
        valid = [j for j in range(i) if status[j] == "valid"]
        q = np.array([quality[j] for j in valid])
        w = np.exp(8.0 * (q - q.max())) / (1.0 + np.array([n_children[j] for j in valid]))
        parent = valid[int(rng.choice(len(valid), p=w / w.sum()))]
        parents.append(parent)
        n_children[parent] += 1
        n_children.append(0)
        roll = rng.random()
        status.append("invalid" if roll < 0.10 else "failed" if roll < 0.14 else "valid")
        quality.append(float(np.clip(quality[parent] + rng.normal(0.0, 0.06), 0.0, 1.0)))
    depth = [0] * n_nodes
    for i, above in enumerate(parents[1:], start=1):
        assert above is not None  # only the root has no parent
        depth[i] = depth[above] + 1
    return _Tree(parents, status, quality, depth)


def _evaluation(run: _Run, values: tuple) -> None:
    for key, value in zip(_EVAL_KEYS, values):
        run.ev[key].append(value)


def _expand_and_evaluate(
    tree: _Tree, rng: np.random.Generator, dev: list[str], evals_per_node: float, llm: bool, run: _Run
) -> None:
    """Each node made in turn (an expand event and a priced call) and, if valid, evaluated on dev."""
    n_dev = len(dev)
    for i in range(len(tree.parents)):
        run.clock += timedelta(seconds=0.2)
        run.nodes_at.append(run.clock)
        if i:
            run.events.append(("expand", tree.parents[i], {"rule": "synthetic"}, run.clock))
            if llm:
                run.calls.append((i, run.clock, float(rng.uniform(0.001, 0.004))))
        if tree.status[i] != "valid":
            continue
        count = n_dev if i == 0 else min(n_dev, int(rng.geometric(1.0 / max(evals_per_node, 1.0))))
        for inst in rng.permutation(n_dev)[:count]:
            bad = rng.random() < 0.03
            score = 0.0 if bad else float(np.clip(tree.quality[i] + rng.normal(0.0, 0.08), 0.0, 1.0))
            start, run.clock = run.clock, run.clock + timedelta(seconds=0.5)
            status = str(rng.choice(["error", "timeout"])) if bad else "ok"
            feedback = "Traceback: synthetic failure" if bad else ""
            _evaluation(run, (i, dev[inst], "dev", score, status, feedback, start, run.clock))
            run.events.append(("evaluate", i, {"instance": dev[inst]}, run.clock))


def _finish(tree: _Tree, rng: np.random.Generator, n_dev: int, holdout: list[str], run: _Run) -> int:
    """The final node (highest mean among nodes with 3 dev evaluations), its event, and holdout runs of it
    and of the seed; returns the dev evaluations made (the run's budget)."""
    n_nodes = len(tree.parents)
    dev_n = np.bincount(run.ev["node"], minlength=n_nodes)
    dev_s = np.bincount(run.ev["node"], weights=run.ev["score"], minlength=n_nodes)
    ok = dev_n >= min(3, n_dev)
    final = int(np.argmax(np.where(ok, dev_s / np.maximum(dev_n, 1), -1.0)))
    run.clock += timedelta(seconds=1)
    run.events.append(("select_final", final, {"rule": "highest mean (synthetic)"}, run.clock))
    for node in dict.fromkeys((0, final)):
        for name in holdout:
            run.clock += timedelta(seconds=0.5)
            score = float(np.clip(tree.quality[node] + rng.normal(0, 0.05), 0, 1))
            _evaluation(run, (node, name, "holdout", score, "ok", "", run.clock, run.clock))
    return int(dev_n.sum())


def _node_columns(tree: _Tree, run: _Run, run_id: str) -> dict[str, dict[str, list]]:
    n = len(tree.parents)
    return {
        "nodes": {
            "id": list(range(n)),
            "run_id": [run_id] * n,
            "parent_id": tree.parents,
            "depth": tree.depth,
            "status": tree.status,
            "created_at": run.nodes_at,
            "mutator": ["seed"] + ["llm"] * (n - 1),
            "code_hash": [f"h{i}" for i in range(n)],
            "reason": ["" if s == "valid" else f"synthetic {s} child" for s in tree.status],
            "description": ["seed"] + [f"synthetic change {i} (parent {tree.parents[i]})" for i in range(1, n)],
        },
        "blobs": {
            "hash": [f"b{i}" for i in range(n)],
            "content": [f"def choose(item, bins):\n    return {i} % len(bins)\n" for i in range(n)],
        },
        "node_files": {"node_id": list(range(n)), "path": ["agent.py"] * n, "hash": [f"b{i}" for i in range(n)]},
    }


def _run_columns(run: _Run) -> dict[str, dict[str, list]]:
    ev, m, k = run.ev, len(run.ev["node"]), len(run.calls)
    tables: dict[str, dict[str, list]] = {
        "evaluations": {
            "node_id": ev["node"],
            "instance_id": ev["inst"],
            "split": ev["split"],
            "repeat": [0] * m,
            "score": ev["score"],
            "metrics": ["{}"] * m,
            "status": ev["status"],
            "runtime_s": [0.5] * m,
            "feedback": ev["feedback"],
            "worker": [f"w{j % 2}" for j in range(m)],
            "started_at": ev["start"],
            "finished_at": ev["end"],
        }
    }
    if run.calls:
        tables["llm_calls"] = {
            "id": list(range(k)),
            "node_id": [c[0] for c in run.calls],
            "purpose": ["mutate"] * k,
            "model": ["synthetic/mock"] * k,
            "request_hash": [f"r{j}" for j in range(k)],
            "request": ["{}"] * k,
            "response": ["{}"] * k,
            "tokens_in": [1200] * k,
            "tokens_out": [300] * k,
            "cost_usd": [c[2] for c in run.calls],
            "latency_s": [1.0] * k,
            "created_at": [c[1] for c in run.calls],
        }
    tables["events"] = {
        "seq": list(range(1, len(run.events) + 1)),
        "at": [e[3] for e in run.events],
        "kind": [e[0] for e in run.events],
        "node_id": [e[1] for e in run.events],
        "detail": [json.dumps(e[2]) for e in run.events],
    }
    return tables


def synthetic_archive(
    path: str | Path,
    n_nodes: int = 2000,
    seed: int = 0,
    n_dev: int = 16,
    n_holdout: int = 8,
    evals_per_node: float = 2.0,
    llm: bool = True,
    run_id: str | None = None,
) -> Path:
    """Write a finished synthetic run of `n_nodes` nodes to `path` (an archive file); returns it.

    `evals_per_node`: mean dev evaluations per valid node (geometric, at most `n_dev`; the root has all)."""
    from engine.config import RunConfig

    rng = np.random.default_rng(seed)
    path = Path(path)
    run_id = run_id or f"synthetic-{n_nodes}-s{seed}"
    tree = _grow(n_nodes, rng)
    config = RunConfig.of(
        budget=0, seed=seed, mutator="llm" if llm else "offline", model="synthetic/mock" if llm else None
    ).to_dict()
    dev = [f"dev{k}" for k in range(n_dev)]
    holdout = [f"holdout{k}" for k in range(n_holdout)]
    run = _Run(events=[("start", 0, {"config": config}, _T0)])
    _expand_and_evaluate(tree, rng, dev, evals_per_node, llm, run)
    config["budget"] = _finish(tree, rng, n_dev, holdout, run)
    with Archive.create(path, run_id, config, seed) as archive:
        archive.add_instances([(name, "dev", {}) for name in dev] + [(name, "holdout", {}) for name in holdout])
        archive.add_rows({**_node_columns(tree, run, run_id), **_run_columns(run)})
        archive.set_status("finished")
    return path
