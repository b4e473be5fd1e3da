"""Time per decision of the HGM scheduler (select + archive write) on synthetic trees, beside a naive recompute.

    python scripts/bench_scheduler.py            # 1k, 10k, 100k nodes, every shape (one to two minutes)
    python scripts/bench_scheduler.py --quick    # 1k and 10k nodes, fewer decisions
    python scripts/bench_scheduler.py --dir /some/disk --sizes 100000 --shapes hgm --json out.json

Synthetic trees (`grow`, printed for every tree): node ids in creation order;
every node has a hidden quality q in [0.02, 0.98], the root 0.4, a child its
parent's q plus N(-0.01, 0.06) (hgm) or N(0, 0.10) (mixed, wide); 15% of
children are invalid (stored, never evaluated, never a candidate). An
evaluation scores clip(q + N(0, 0.2), 0, 1) (fractional), or 0 for the 5%
that fail. 16 dev instances, so at most 16 own evaluations per node.
- `hgm`: the shape HGMPolicy itself produces with 16 dev instances. Widening
  (t^0.6 >= valid nodes, with t <= 16 nodes) stops at about 64 nodes; after
  that the policy expands only when no node has an instance left to run, so
  every valid node has all 16 evaluations but the newest few (3 here, as if
  in flight), and evaluations outnumber nodes 16 to 1. Parents by
  tournament: the best of 3 earlier valid nodes (HGM favours good clades).
- `mixed`: parents uniformly at random (random recursive tree, depth ~ ln n),
  1 to 16 evaluations per valid node, uniformly: most nodes open.
- `wide`: parents uniformly at random, 1 to 3 evaluations per valid node: flat
  posteriors, every node open; the hard case for pruning. (Not a state HGM
  reaches with 16 dev instances; it stands for larger dev sets or staged
  evaluation.)
The numbers are written into the tree's arrays directly (one
finish_evaluation per evaluation would take minutes at 100k nodes); the naive
side's clade sums are checked against them.

Engine, per decision, as engine/loop/scheduler.py does it: `HGMPolicy().decide(
tree.view(), rng)` (select; it includes keeping the bounds of search.bounds in
step with the evaluations since the last pruned draw), then for an evaluation
`tree.start_evaluation` + `tree.finish_evaluation` (update) and one
`Archive.add_evaluation(record, event=...)` committed to a DuckDB file in a
temporary directory (write); the archive first gets as many evaluation and
event rows as the tree holds. An expansion adds a node (its `add_node` write,
which comes with the mutator's work, is timed apart). The bounds are built
once before timing (printed). Then, per tree, decisions forced to one kind,
each after one untimed real decision so bound upkeep is paid: an expansion
(the clade draw over every evaluated node) and an evaluation (the own draw
over every open node), with pruning and with the plain vectorized draw.
Naive side, per decision: what HGM's public code does (every node pools its
subtree again, `get_decendant_evals`: O(n depth)) + one Thompson draw over every
candidate; and one O(n) reverse pass (`search.tree.recompute_clade_sums`) + the
draw. At 100k nodes these take seconds, so only a few are timed.
Writes: `Archive.add_evaluation` beside variants that store the same rows
(settings, executemany, PREPARE/EXECUTE, one multi-statement call), taking
turns, on the chosen directory and on /dev/shm (memory) to tell the disk's
flush from DuckDB's own CPU time.
Timings are wall-clock medians and 90th percentiles on whatever else the
machine is doing; its load average is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from archive.benchmarks import prefill
from archive.records import EvaluationRecord, NodeRecord
from archive.store import Archive, utcnow
from search import HGMPolicy
from search.decisions import Evaluate, Expand, evaluable
from search.thompson import thompson_argmax
from search.tree import TreeStats, recompute_clade_sums

N_INSTANCES = 16
INVALID = 0.15
FAIL = 0.05
NOISE = 0.2
SHAPES = ("hgm", "mixed", "wide")


# ----- synthetic trees -----------------------------------------------------------
@dataclass
class Synthetic:
    shape: str
    tree: TreeStats
    quality: list[float]
    children: list[list[int]]

    def describe(self) -> str:
        n, tree = self.tree.n, self.tree
        depth = tree.depth[:n]
        evals = tree.n_evals[:n][tree.valid[:n]]
        return (
            f"{self.shape}: {n} nodes ({tree.n_valid} valid), depth mean {depth.mean():.1f} max {depth.max()}, "
            f"own evaluations per valid node mean {evals.mean():.1f} (min {evals.min()}, max {evals.max()}), "
            f"{tree.evaluations_done} evaluations, {len(tree.open_nodes)} open nodes"
        )


def child_quality(q: float, shape: str, rng: np.random.Generator) -> float:
    step = rng.normal(-0.01, 0.06) if shape == "hgm" else rng.normal(0.0, 0.10)
    return float(min(max(q + step, 0.02), 0.98))


def score(q: float, rng: np.random.Generator) -> float:
    if rng.random() < FAIL:
        return 0.0
    return float(min(max(q + rng.normal(0.0, NOISE), 0.0), 1.0))


def grow(n: int, shape: str, seed: int) -> Synthetic:
    """A tree of n nodes of the given shape (see the module docstring), its numbers filled in directly."""
    rng = np.random.default_rng(seed)
    parent = [-1]
    quality = [0.4]
    valid = [True]
    usable = [0]  # valid nodes, the possible parents
    picks = rng.integers(0, 2**62, size=(n, 3))
    for node in range(1, n):
        if shape == "hgm":
            trio = [usable[int(x) % len(usable)] for x in picks[node]]
            p = max(trio, key=lambda i: quality[i])
        else:
            p = usable[int(picks[node, 0]) % len(usable)]
        parent.append(p)
        quality.append(child_quality(quality[p], shape, rng))
        ok = bool(rng.random() >= INVALID)
        valid.append(ok)
        if ok:
            usable.append(node)
    valid_arr = np.array(valid)
    if shape == "hgm":
        k = np.where(valid_arr, N_INSTANCES, 0)
        newest = np.flatnonzero(valid_arr)[-4:]
        k[newest[1:]] = rng.integers(0, N_INSTANCES, size=len(newest) - 1)  # in flight when the snapshot is taken
    elif shape == "mixed":
        k = np.where(valid_arr, rng.integers(1, N_INSTANCES + 1, size=n), 0)
    else:
        k = np.where(valid_arr, rng.integers(1, 4, size=n), 0)
    owner = np.repeat(np.arange(n), k)
    x = np.clip(np.asarray(quality)[owner] + rng.normal(0.0, NOISE, size=len(owner)), 0.0, 1.0)
    x[rng.random(len(owner)) < FAIL] = 0.0
    s = np.bincount(owner, weights=x, minlength=n)
    f = k - s
    tree = TreeStats(N_INSTANCES, capacity=n + 4096)
    children: list[list[int]] = [[] for _ in range(n)]
    for node in range(n):
        tree.add_node(None if node == 0 else parent[node], valid[node])
        if node:
            children[parent[node]].append(node)
    # the evaluations, filled in directly (one finish_evaluation per evaluation would take minutes)
    tree.s[:n], tree.f[:n], tree.n_evals[:n] = s, f, k
    S, F = recompute_clade_sums(tree.parent[:n], s, f)
    tree.S[:n], tree.F[:n] = S, F
    counts = k.astype(np.int64).copy()
    for node in range(n - 1, 0, -1):
        counts[parent[node]] += counts[node]
    tree.n_clade_evals[:n] = counts
    tree.tried = [(1 << int(c)) - 1 for c in k]
    tree.evaluations_done = int(k.sum())
    tree.open_mask[:n] = valid[:n] & (k[:n] < N_INSTANCES)
    tree.open_changed()
    return Synthetic(shape, tree, quality, children)


# ----- the engine side -------------------------------------------------------------
AGENT_FILE = "def choose(item, bins, capacity):\n    return 0\n"


def prefilled_archive(folder: Path, evaluations: int) -> Archive:
    """A run archive holding as many evaluation and event rows as the synthetic tree (ids kept apart)."""
    path = folder / "archive.duckdb"
    archive = Archive.create(path, "bench", {"bench": True}, 0)
    archive.add_node(NodeRecord(0, None, 0, "valid", "seed"), {"agent.py": AGENT_FILE})
    prefill(archive, evaluations)
    archive.close()
    return Archive.open(path)  # reopened: the event sequence continues after the prefill


def evaluation_record(node: int, instance: int, x: float) -> EvaluationRecord:
    now = utcnow()
    return EvaluationRecord(
        node_id=node,
        instance_id=f"dev{instance}",
        split="dev",
        repeat=0,
        score=x,
        metrics={"bins": 41, "seed_bins": 43, "ratio": round(x, 6)},
        status="ok",
        runtime_s=0.42,
        stdout_tail="placed 120 items\n" * 8,
        stderr_tail="",
        feedback="",
        worker="w0",
        started_at=now,
        finished_at=now,
    )


def expand(syn: Synthetic, parent: int, rng: np.random.Generator) -> int:
    q = child_quality(syn.quality[parent], syn.shape, rng)
    child = syn.tree.add_node(parent, bool(rng.random() >= INVALID))
    syn.quality.append(q)
    syn.children.append([])
    syn.children[parent].append(child)
    return child


@dataclass
class Timings:
    kind: list[str]
    select: list[float]
    view: list[float]
    update: list[float]
    write: list[float]
    expand_write: list[float]


def engine_pass(syn: Synthetic, archive: Archive | None, decisions: int, seed: int) -> Timings:
    """The engine's loop, one decision at a time (no sandbox: scores come from the hidden quality)."""
    tree, policy = syn.tree, HGMPolicy()
    rng, world = np.random.default_rng(seed), np.random.default_rng(seed + 1)
    out = Timings([], [], [], [], [], [])
    clock = time.perf_counter
    for _ in range(decisions):
        t0 = clock()
        view = tree.view()
        tv = clock()
        decision = policy.decide(view, rng)
        t1 = clock()
        if isinstance(decision, Evaluate):
            node, instance = decision.node_id, decision.instance
            x = score(syn.quality[node], world)
            record = evaluation_record(node, instance, x)
            detail = {**decision.detail, "instance": record.instance_id, "score": x, "status": "ok"}
            t2 = clock()
            tree.start_evaluation(node, instance)
            t3 = clock()
            if archive is not None:
                archive.add_evaluation(record, event=("evaluate", node, detail))
            t4 = clock()
            tree.finish_evaluation(node, instance, x)
            t5 = clock()
            out.kind.append("evaluate")
            out.update.append((t3 - t2) + (t5 - t4))
            out.write.append(t4 - t3)
        elif isinstance(decision, Expand):
            child = expand(syn, decision.node_id, world)
            out.kind.append("expand")
            out.update.append(0.0)
            out.write.append(0.0)
            if archive is not None:
                record = NodeRecord(
                    child,
                    decision.node_id,
                    int(tree.depth[child]),
                    "valid" if tree.valid[child] else "invalid",
                    "offline",
                    diff="@@ -1 +1 @@\n",
                )
                t2 = clock()
                archive.add_node(
                    record,
                    {"agent.py": AGENT_FILE + f"# {child}\n"},
                    event=("expand", decision.node_id, decision.detail),
                )
                out.expand_write.append(clock() - t2)
        else:
            break
        out.select.append(t1 - t0)
        out.view.append(tv - t0)
    return out


def forced_pass(
    syn: Synthetic, kind: str, decisions: int, seed: int, pruning: bool = True
) -> tuple[list[float], list[float]]:
    """Times of (tree.view(), HGMPolicy.decide) for decisions forced to one kind: 'expand' holds widening
    open (pending_expansions = -n): the clade draw over every evaluated node; 'evaluate' shuts it
    (pending_expansions = 10 n): the own draw over every open node. Before each, one real decision is
    carried out untimed, so the timed one also pays the upkeep of the bounds for what that changed.
    pruning=False: the same with the plain vectorized draw (search.bounds.MIN_PRUNED set out of reach)."""
    from search import bounds

    tree, policy = syn.tree, HGMPolicy()
    rng, world = np.random.default_rng(seed), np.random.default_rng(seed + 1)
    pending = -tree.n if kind == "expand" else 10 * tree.n
    saved = bounds.MIN_PRUNED
    if not pruning:
        bounds.MIN_PRUNED = 1 << 62
    views, decides = [], []
    try:
        for _ in range(decisions):
            decision = policy.decide(tree.view(), rng)
            if isinstance(decision, Evaluate):
                tree.start_evaluation(decision.node_id, decision.instance)
                tree.finish_evaluation(decision.node_id, decision.instance, score(syn.quality[decision.node_id], world))
            elif isinstance(decision, Expand):
                expand(syn, decision.node_id, world)
            t0 = time.perf_counter()
            view = tree.view(pending_expansions=pending if kind == "expand" else 10 * tree.n)
            t1 = time.perf_counter()
            policy.decide(view, rng)
            t2 = time.perf_counter()
            views.append(t1 - t0)
            decides.append(t2 - t1)
    finally:
        bounds.MIN_PRUNED = saved
    return views, decides


def prune_profile(syn: Synthetic, draws: int, seed: int) -> dict:
    """What the pruned draws do on this tree: candidates drawn in full and tail draws, per draw."""
    from search.bounds import clade_thompson, own_thompson
    from search.thompson import PruneStats

    view = syn.tree.view()
    out = {}
    for kind, nodes, draw in (
        ("expand", evaluable(view), lambda nodes, rng, stats: clade_thompson(view, nodes, 1.0, rng, stats)),
        (
            "evaluate",
            np.asarray(view.open_nodes, dtype=np.int64),
            lambda nodes, rng, stats: own_thompson(view, nodes, rng, stats),
        ),
    ):
        rng, drawn, picked = np.random.default_rng(seed), [], []
        for _ in range(draws if len(nodes) else 0):
            stats = PruneStats()
            draw(nodes, rng, stats)
            if stats.candidates:  # the pruned path ran (not the plain draw)
                drawn.append(stats.drawn)
                picked.append(stats.picked)
        out[kind] = {
            "candidates": len(nodes),
            "pruned": len(drawn),
            "draws": draws,
            "drawn": float(np.median(drawn)) if drawn else None,
            "tail": float(np.median(picked)) if picked else None,
        }
    return out


# ----- the naive side ----------------------------------------------------------------
def naive_subtree_decision(syn: Synthetic, rng: np.random.Generator) -> tuple[int, np.ndarray]:
    """HGM's public code: each node pools its whole subtree again, then one Thompson draw."""
    tree = syn.tree
    n = tree.n
    s, f, children = tree.s[:n].tolist(), tree.f[:n].tolist(), syn.children
    S, F = [0.0] * n, [0.0] * n
    for node in range(n):
        stack, a, b = [node], 0.0, 0.0
        while stack:
            v = stack.pop()
            a += s[v]
            b += f[v]
            stack.extend(children[v])
        S[node], F[node] = a, b
    candidates = evaluable(tree.view())
    S_arr, F_arr = np.asarray(S), np.asarray(F)
    best, _ = thompson_argmax(1.0 + S_arr[candidates], 1.0 + F_arr[candidates], rng)
    return int(candidates[best]), S_arr


def naive_pass_decision(syn: Synthetic, rng: np.random.Generator) -> int:
    """One O(n) reverse pass (search.tree.recompute_clade_sums), then one Thompson draw."""
    tree = syn.tree
    n = tree.n
    S, F = recompute_clade_sums(tree.parent[:n], tree.s[:n], tree.f[:n])
    candidates = evaluable(tree.view())
    best, _ = thompson_argmax(1.0 + S[candidates], 1.0 + F[candidates], rng)
    return int(candidates[best])


def timed(fn, at_least: int, seconds: float) -> list[float]:
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < at_least or (time.perf_counter() - start < seconds and len(times) < 50):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


# ----- archive writes: does any honest trick make a committed write cheaper? ----------------
EVENT_DETAIL = {
    "t": 0,
    "t_alpha": 1.0,
    "grown": 3,
    "theta": 0.61,
    "candidates": 1,
    "instance": "dev0",
    "score": 0.5,
    "status": "ok",
}


def write_variants(folder: Path, rounds: int) -> list[tuple[str, list[float]]]:
    """Each variant stores what `Archive.add_evaluation` stores (one evaluation row, one event row);
    all but the last two commit it (archive/benchmarks.py). Variants take turns, so load on the machine
    hits all alike."""
    from archive import benchmarks

    def engine_write(archive: Archive, ev: EvaluationRecord, event: benchmarks.Event) -> None:
        archive.add_evaluation(ev, event=event)

    variants: list[tuple[str, str | None, benchmarks.Write]] = [
        ("Archive.add_evaluation (as the engine does)", None, engine_write),
        ("  same, SET threads=1", "SET threads=1", engine_write),
        ("  same, SET checkpoint_threshold='1GB'", "SET checkpoint_threshold='1GB'", engine_write),
        ("  executemany, one row per table", None, benchmarks.executemany),
        ("  PREPARE once, EXECUTE with literals", None, benchmarks.prepared),
        ("  one execute() for BEGIN..COMMIT", None, benchmarks.one_call),
        ("  threads=1 + disable_optimizer", "SET threads=1; PRAGMA disable_optimizer", engine_write),
        ("  [not durable] the same inserts, rolled back", None, benchmarks.rolled_back),
        ("  [one row] the event row alone, committed", None, benchmarks.event_only),
    ]
    archives = []
    for k, (_, setting, _) in enumerate(variants):
        archive = Archive.create(folder / f"w{k}" / "archive.duckdb", "bench", {}, 0)
        benchmarks.prepare(archive, setting)
        archives.append(archive)
    times: list[list[float]] = [[] for _ in variants]
    for i in range(rounds + 20):
        for k, (_, _, fn) in enumerate(variants):
            t0 = time.perf_counter()
            fn(archives[k], evaluation_record(i, 0, 0.5), ("evaluate", i, {**EVENT_DETAIL, "t": i}))
            if i >= 20:  # the first rounds warm up
                times[k].append(time.perf_counter() - t0)
    for archive in archives:
        archive.close()
    return [(name, t) for (name, _, _), t in zip(variants, times)]


# ----- report ----------------------------------------------------------------------
def ms(values, q: float = 50) -> float:
    return float(np.percentile(np.asarray(values) * 1e3, q)) if len(values) else float("nan")


def filesystem(path: Path) -> str:
    best, found = "", "unknown"
    try:
        for line in Path("/proc/mounts").read_text().splitlines():
            device, mount, fstype = line.split()[:3]
            if str(path.resolve()).startswith(mount) and len(mount) > len(best):
                best, found = mount, f"{fstype} on {mount} ({device})"
    except OSError:
        pass
    return found


def machine(folder: Path) -> list[str]:
    import duckdb
    import scipy

    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "?"
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return [
        (
            f"machine: {platform.platform()}, {platform.processor() or platform.machine()}, nproc {os.cpu_count()} "
            f"(usable {usable}), load average {load}"
        ),
        f"python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
        f"duckdb {duckdb.__version__}",
        f"archive files in {folder}: {filesystem(folder)}",
    ]


def run(n: int, shape: str, args, folder: Path) -> dict:
    clock = time.perf_counter
    t0 = clock()
    syn = grow(n, shape, args.seed)
    grown_s = clock() - t0
    tree = syn.tree
    print(f"  {syn.describe()} [made in {grown_s:.1f} s]", flush=True)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        t0 = clock()
        archive = prefilled_archive(Path(tmp), tree.evaluations_done)
        prefill_s = clock() - t0
        # bounds are built at the first pruned draws (a fixed tau is asked twice first): timed apart
        rng = np.random.default_rng(args.seed + 9)
        t0 = clock()
        for pending in (-tree.n, -tree.n, 10 * tree.n):
            HGMPolicy().decide(tree.view(pending_expansions=pending), rng)
        build_s = clock() - t0
        engine = engine_pass(syn, archive, args.decisions, args.seed)
        archive.close()
    view = tree.view()
    open_copy = timed(lambda: view.open_nodes, 5, 0.05)  # HGMPolicy._evaluate
    forced = {
        (kind, pruning): forced_pass(syn, kind, args.forced if pruning else args.plain, args.seed + 2, pruning)
        for kind in ("expand", "evaluate")
        for pruning in (True, False)
    }
    profile = prune_profile(syn, 40, args.seed + 4)
    rng = np.random.default_rng(args.seed + 5)
    last: dict = {}

    def walk():
        last["node"], last["S"] = naive_subtree_decision(syn, rng)

    naive_walk = timed(walk, args.naive_min, args.naive_seconds)
    assert np.allclose(last["S"], tree.S[: tree.n]), "naive and incremental clade sums differ"
    naive_pass = timed(lambda: naive_pass_decision(syn, rng), args.naive_min, args.naive_seconds)
    kinds = np.asarray(engine.kind)
    ev = kinds == "evaluate"
    total = np.asarray(engine.select) + np.asarray(engine.update) + np.asarray(engine.write)
    return {
        "nodes": n,
        "shape": shape,
        "description": syn.describe(),
        "prefill_s": prefill_s,
        "build_s": build_s,
        "decisions": len(kinds),
        "evaluate_decisions": int(ev.sum()),
        "expand_decisions": int((~ev).sum()),
        "select": engine.select,
        "view": engine.view,
        "open_copy": open_copy,
        "select_evaluate": list(np.asarray(engine.select)[ev]),
        "select_expand": list(np.asarray(engine.select)[~ev]),
        "update": list(np.asarray(engine.update)[ev]),
        "write": list(np.asarray(engine.write)[ev]),
        "expand_write": engine.expand_write,
        "total": list(total),
        "expand_view": forced[("expand", True)][0],
        "expand_decide": forced[("expand", True)][1],
        "expand_plain": forced[("expand", False)][1],
        "forced_expand": list(np.add(*forced[("expand", True)])),
        "evaluate_view": forced[("evaluate", True)][0],
        "evaluate_decide": forced[("evaluate", True)][1],
        "evaluate_plain": forced[("evaluate", False)][1],
        "forced_evaluate": list(np.add(*forced[("evaluate", True)])),
        "profile": profile,
        "naive_walk": naive_walk,
        "naive_pass": naive_pass,
    }


def print_tables(results: list[dict]) -> None:
    print(
        "Engine, per decision of its own loop (ms, median/p90): select = tree.view() + HGMPolicy.decide "
        "(bounds upkeep included), of which view = tree.view() alone; update = start_evaluation + "
        "finish_evaluation; write = Archive.add_evaluation, one commit; total = their sum per decision. "
        "Naive, per decision (ms, median): walk = every node pools its subtree again (HGM's public code) + "
        "one draw; pass = one O(n) recompute + one draw."
    )
    head = (
        f"{'nodes':>7} {'shape':<6} {'eval/exp':>9} | {'select':>12} {'view':>5} {'update':>6} "
        f"{'write':>12} {'total':>12} | {'naive walk':>10} {'pass':>7} | {'walk/total':>10}"
    )
    print(head)
    print("-" * len(head))
    for r in results:
        print(
            f"{r['nodes']:>7} {r['shape']:<6} {r['evaluate_decisions']:>4}/{r['expand_decisions']:<4} | "
            f"{ms(r['select']):5.2f}/{ms(r['select'], 90):5.2f} {ms(r['view']):5.2f} {ms(r['update']):6.3f} "
            f"{ms(r['write']):5.2f}/{ms(r['write'], 90):5.2f} {ms(r['total']):5.2f}/{ms(r['total'], 90):5.2f} | "
            f"{ms(r['naive_walk']):10.1f} {ms(r['naive_pass']):7.1f} | "
            f"{ms(r['naive_walk']) / ms(r['total']):10.1f}"
        )
    print()
    print(
        "Selection alone, decisions forced to one kind (ms, median/p90): view = tree.view(); decide = "
        "HGMPolicy.decide with the pruned exact draw, plain = with the vectorized draw over every candidate; "
        "drawn/tail = candidates drawn in full / tail draws per pruned draw ('plain': below the size where "
        "pruning pays); open = view.open_nodes (flatnonzero of the open mask) in "
        "HGMPolicy._evaluate; walk/sel = naive walk "
        "over the expansion's view + decide."
    )
    head = (
        f"{'nodes':>7} {'shape':<6} | {'expand: cands':>13} {'view':>5} {'decide':>11} {'plain':>6} "
        f"{'drawn/tail':>10} | {'evaluate: open':>14} {'view':>5} {'decide':>11} {'plain':>6} {'copy':>5} "
        f"{'drawn/tail':>10} | {'walk/sel':>8}"
    )
    print(head)
    print("-" * len(head))

    def drawn(p: dict) -> str:
        return f"{p['drawn']:.0f}/{p['tail']:.0f}" if p["drawn"] is not None else "plain"

    for r in results:
        px, pe = r["profile"]["expand"], r["profile"]["evaluate"]
        print(
            f"{r['nodes']:>7} {r['shape']:<6} | {px['candidates']:>13} {ms(r['expand_view']):5.2f} "
            f"{ms(r['expand_decide']):5.2f}/{ms(r['expand_decide'], 90):5.2f} {ms(r['expand_plain']):6.2f} "
            f"{drawn(px):>10} | {pe['candidates']:>14} {ms(r['evaluate_view']):5.2f} "
            f"{ms(r['evaluate_decide']):5.2f}/{ms(r['evaluate_decide'], 90):5.2f} "
            f"{ms(r['evaluate_plain']):6.2f} {ms(r['open_copy']):5.2f} {drawn(pe):>10} | "
            f"{ms(r['naive_walk']) / ms(r['forced_expand']):8.0f}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1k and 10k nodes, fewer decisions")
    parser.add_argument("--sizes", type=int, nargs="+", help="tree sizes (default 1000 10000 100000)")
    parser.add_argument("--shapes", nargs="+", choices=SHAPES, default=list(SHAPES))
    parser.add_argument("--decisions", type=int, help="engine decisions timed per tree (default 300)")
    parser.add_argument(
        "--dir",
        type=Path,
        default=Path(tempfile.gettempdir()),
        help="where the temporary archives go (default: the system temp dir)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write every timing here")
    args = parser.parse_args(argv)
    args.sizes = args.sizes or ([1000, 10000] if args.quick else [1000, 10000, 100000])
    args.decisions = args.decisions or (100 if args.quick else 300)
    args.forced = 60 if args.quick else 200
    args.plain = 10 if args.quick else 20
    args.naive_min, args.naive_seconds = (1, 1.0) if args.quick else (2, 3.0)
    args.dir.mkdir(parents=True, exist_ok=True)
    print(
        "Clade scheduler benchmark: time per decision, engine (incremental sums, pruned exact Thompson "
        "draw, one committed DuckDB write) vs naive (pool every subtree again, one full draw)"
    )
    for line in machine(args.dir):
        print("  " + line)
    results = []
    for n in args.sizes:
        for shape in args.shapes:
            print(f"[{n} nodes, {shape}]", flush=True)
            r = run(n, shape, args, args.dir)
            print(
                f"  archive prefilled with {r['description'].split(', ')[-2]} in {r['prefill_s']:.1f} s; "
                f"bounds built in {r['build_s'] * 1e3:.0f} ms (once); {r['decisions']} engine decisions, "
                f"{len(r['naive_walk'])} + {len(r['naive_pass'])} naive ones; select on evaluations "
                f"{ms(r['select_evaluate']):.2f} ms, on expansions {ms(r['select_expand']):.2f} ms "
                f"(median); add_node write {ms(r['expand_write']):.2f} ms",
                flush=True,
            )
            results.append(r)
    print()
    print_tables(results)
    print()
    rounds = 100 if args.quick else 300
    places = [args.dir]
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK) and filesystem(shm) != filesystem(args.dir):
        places.append(shm)  # memory-backed: the same writes without the disk's flush, to tell CPU from disk
    print(f"Committed writes of one evaluation (ms, median/p90, {rounds} each, variants taking turns, fresh archives):")
    print(f"  {'':<48} " + " ".join(f"{filesystem(place).split(' ')[0] + ' ' + str(place):>17}" for place in places))
    columns = []
    for place in places:
        with tempfile.TemporaryDirectory(dir=place) as tmp:
            columns.append(write_variants(Path(tmp), rounds))
    for k, (name, _) in enumerate(columns[0]):
        print(f"  {name:<48} " + " ".join(f"{ms(col[k][1]):7.3f} / {ms(col[k][1], 90):7.3f}" for col in columns))
    print()
    verdict(results, ms(columns[0][-1][1]))
    print("machine load at the end: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    if args.json:
        args.json.write_text(json.dumps(results, default=float, indent=1))
    return 0


def verdict(results: list[dict], one_row_commit: float) -> None:
    largest = max(r["nodes"] for r in results)
    for r in (r for r in results if r["nodes"] == largest):
        parts = [
            ("the engine's own decisions", r["select"]),
            ("forced expansions", r["forced_expand"]),
            ("forced evaluations", r["forced_evaluate"]),
        ]
        worst = max(ms(times) for _, times in parts)
        print(
            f"verdict at {largest} nodes, {r['shape']}: selection {'meets' if worst < 1 else 'misses'} the 1 ms "
            f"goal (median/p90: "
            + "; ".join(f"{name} {ms(t):.2f}/{ms(t, 90):.2f}" for name, t in parts)
            + f"); select + update + write {'meets' if ms(r['total']) < 1 else 'misses'} it: "
            f"{ms(r['total']):.2f} ms, of which the DuckDB write {ms(r['write']):.2f} ms "
            f"(one committed one-row insert alone: {one_row_commit:.2f} ms here)."
        )


if __name__ == "__main__":
    sys.exit(main())
