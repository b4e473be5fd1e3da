"""A synthetic run archive of any size, for benchmarks and tests of what reads archives.

`synthetic_archive(path, n_nodes)` writes a real archive (the schema of
`archive.schema`, through `Archive.create`) that looks like an HGM search:
children of good nodes are picked more often, scores drift from the parent,
about 10 % of children are invalid and 4 % failed, most nodes get one or two
dev evaluations and a few many, some evaluations end in errors or timeouts,
each expansion is one priced LLM call, and the run ends with a
`select_final` event and holdout evaluations of the final node and the seed.
Rows go in with a few bulk inserts (lists unnested in SQL), so 2,000 nodes
take well under a second. Deterministic for a seed.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from archive import Archive

_T0 = datetime(2025, 1, 1, 12, 0, 0)


def _insert(archive: Archive, table: str, columns: dict[str, tuple[str, list]]) -> None:
    """Insert equal-length lists as rows: one statement, the lists unnested side by side."""
    names = ", ".join(f'"{c}"' for c in columns)
    values = ", ".join(f"unnest(?::{sql_type}[])" for sql_type, _ in columns.values())
    archive.query(f"INSERT INTO {table} ({names}) SELECT {values}", [v for _, v in columns.values()])


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
    parents, status, quality, n_children = [None], ["valid"], [0.5], [0]
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
    for i in range(1, n_nodes):
        depth[i] = depth[parents[i]] + 1

    config = RunConfig.of(
        budget=0, seed=seed, mutator="llm" if llm else "offline", model="synthetic/mock" if llm else None
    ).to_dict()
    dev = [f"dev{k}" for k in range(n_dev)]
    holdout = [f"holdout{k}" for k in range(n_holdout)]
    ev: dict[str, list] = {k: [] for k in ("node", "inst", "split", "score", "status", "feedback", "start", "end")}
    nodes_at, calls = [], []
    events: list[tuple] = [("start", 0, {"config": config}, _T0)]  # (kind, node, detail, time)
    clock = _T0
    for i in range(n_nodes):
        clock += timedelta(seconds=0.2)
        nodes_at.append(clock)
        if i:
            events.append(("expand", parents[i], {"rule": "synthetic"}, clock))
            if llm:
                calls.append((i, clock, float(rng.uniform(0.001, 0.004))))
        if status[i] != "valid":
            continue
        count = n_dev if i == 0 else min(n_dev, int(rng.geometric(1.0 / max(evals_per_node, 1.0))))
        for inst in rng.permutation(n_dev)[:count]:
            bad = rng.random() < 0.03
            score = 0.0 if bad else float(np.clip(quality[i] + rng.normal(0.0, 0.08), 0.0, 1.0))
            start, clock = clock, clock + timedelta(seconds=0.5)
            ev["node"].append(i)
            ev["inst"].append(dev[inst])
            ev["split"].append("dev")
            ev["score"].append(score)
            ev["status"].append(str(rng.choice(["error", "timeout"])) if bad else "ok")
            ev["feedback"].append("Traceback: synthetic failure" if bad else "")
            ev["start"].append(start)
            ev["end"].append(clock)
            events.append(("evaluate", i, {"instance": dev[inst]}, clock))
    dev_n = np.bincount(ev["node"], minlength=n_nodes)
    dev_s = np.bincount(ev["node"], weights=ev["score"], minlength=n_nodes)
    ok = dev_n >= min(3, n_dev)
    final = int(np.argmax(np.where(ok, dev_s / np.maximum(dev_n, 1), -1.0)))
    clock += timedelta(seconds=1)
    events.append(("select_final", final, {"rule": "highest mean (synthetic)"}, clock))
    for node in dict.fromkeys((0, final)):
        for name in holdout:
            clock += timedelta(seconds=0.5)
            for key, value in (
                ("node", node),
                ("inst", name),
                ("split", "holdout"),
                ("score", float(np.clip(quality[node] + rng.normal(0, 0.05), 0, 1))),
                ("status", "ok"),
                ("feedback", ""),
                ("start", clock),
                ("end", clock),
            ):
                ev[key].append(value)

    config["budget"] = int(dev_n.sum())
    with Archive.create(path, run_id, config, seed) as archive:
        archive.add_instances([(name, "dev", {}) for name in dev] + [(name, "holdout", {}) for name in holdout])
        archive.query("BEGIN")
        _insert(
            archive,
            "nodes",
            {
                "id": ("BIGINT", list(range(n_nodes))),
                "run_id": ("VARCHAR", [run_id] * n_nodes),
                "parent_id": ("BIGINT", parents),
                "depth": ("INTEGER", depth),
                "status": ("VARCHAR", status),
                "created_at": ("TIMESTAMP", nodes_at),
                "mutator": ("VARCHAR", ["seed"] + ["llm"] * (n_nodes - 1)),
                "code_hash": ("VARCHAR", [f"h{i}" for i in range(n_nodes)]),
                "reason": ("VARCHAR", ["" if s == "valid" else f"synthetic {s} child" for s in status]),
                "description": (
                    "VARCHAR",
                    ["seed"] + [f"synthetic change {i} (parent {parents[i]})" for i in range(1, n_nodes)],
                ),
            },
        )
        _insert(
            archive,
            "blobs",
            {
                "hash": ("VARCHAR", [f"b{i}" for i in range(n_nodes)]),
                "content": (
                    "VARCHAR",
                    [f"def choose(item, bins):\n    return {i} % len(bins)\n" for i in range(n_nodes)],
                ),
            },
        )
        _insert(
            archive,
            "node_files",
            {
                "node_id": ("BIGINT", list(range(n_nodes))),
                "path": ("VARCHAR", ["agent.py"] * n_nodes),
                "hash": ("VARCHAR", [f"b{i}" for i in range(n_nodes)]),
            },
        )
        m = len(ev["node"])
        _insert(
            archive,
            "evaluations",
            {
                "node_id": ("BIGINT", ev["node"]),
                "instance_id": ("VARCHAR", ev["inst"]),
                "split": ("VARCHAR", ev["split"]),
                "repeat": ("INTEGER", [0] * m),
                "score": ("DOUBLE", ev["score"]),
                "metrics": ("JSON", ["{}"] * m),
                "status": ("VARCHAR", ev["status"]),
                "runtime_s": ("DOUBLE", [0.5] * m),
                "feedback": ("VARCHAR", ev["feedback"]),
                "worker": ("VARCHAR", [f"w{k % 2}" for k in range(m)]),
                "started_at": ("TIMESTAMP", ev["start"]),
                "finished_at": ("TIMESTAMP", ev["end"]),
            },
        )
        if calls:
            _insert(
                archive,
                "llm_calls",
                {
                    "id": ("BIGINT", list(range(len(calls)))),
                    "node_id": ("BIGINT", [c[0] for c in calls]),
                    "purpose": ("VARCHAR", ["mutate"] * len(calls)),
                    "model": ("VARCHAR", ["synthetic/mock"] * len(calls)),
                    "request_hash": ("VARCHAR", [f"r{k}" for k in range(len(calls))]),
                    "request": ("JSON", ["{}"] * len(calls)),
                    "response": ("JSON", ["{}"] * len(calls)),
                    "tokens_in": ("BIGINT", [1200] * len(calls)),
                    "tokens_out": ("BIGINT", [300] * len(calls)),
                    "cost_usd": ("DOUBLE", [c[2] for c in calls]),
                    "latency_s": ("DOUBLE", [1.0] * len(calls)),
                    "created_at": ("TIMESTAMP", [c[1] for c in calls]),
                },
            )
        _insert(
            archive,
            "events",
            {
                "seq": ("BIGINT", list(range(1, len(events) + 1))),
                "at": ("TIMESTAMP", [e[3] for e in events]),
                "kind": ("VARCHAR", [e[0] for e in events]),
                "node_id": ("BIGINT", [e[1] for e in events]),
                "detail": ("JSON", [json.dumps(e[2]) for e in events]),
            },
        )
        archive.query("COMMIT")
        archive.set_status("finished")
    return path
