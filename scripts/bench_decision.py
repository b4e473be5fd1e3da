"""CPU time of one HGM decision (`tree.view` + `HGMPolicy.decide`) on synthetic trees, beside another checkout.

    python scripts/bench_decision.py                          # 1k, 10k, 100k nodes, this checkout
    python scripts/bench_decision.py --against /path/to/old   # the same, taking turns with an older checkout

The loop is the engine's at a steady state (engine/loop/scheduler.py): decide
on a fresh view; an evaluation is started, and once `--workers` evaluations are
in flight one of them, chosen at random, finishes with a score drawn from the
node's hidden quality (scripts/bench_scheduler.py's `grow`, shape `mixed`: most
of the 16 dev instances open at most nodes); an expansion adds a child (15 %
invalid). Only the decision is timed, in CPU time (`time.process_time`: a
loaded machine inflates it less than wall time). The bounds of search.bounds
are built by untimed decisions first, as in scripts/bench_cluster.py.
With `--against`, each size runs in a fresh process per checkout, the two in
turn, and the decisions' digests (kind, node, instance and every number in
their detail) must be equal: the same decisions for the same seed and tree.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def measure(n: int, decisions: int, workers: int, seed: int) -> dict:
    """One checkout's run (in this process): CPU ms per decision and the decisions' digest."""
    import numpy as np
    from bench_scheduler import child_quality, grow, score

    from search import HGMPolicy
    from search.decisions import Evaluate

    syn = grow(n, "mixed", seed)
    tree, policy = syn.tree, HGMPolicy()
    for pending in (-tree.n, -tree.n, 10 * tree.n):  # untimed: the bounds' first build (bench_cluster.py)
        policy.decide(tree.view(pending_expansions=pending), np.random.default_rng(seed + 9))
    rng, world = np.random.default_rng(seed + 3), np.random.default_rng(seed + 4)
    digest, flying, cpu, kinds = hashlib.sha256(), [], 0.0, {"Evaluate": 0, "Expand": 0}
    for _ in range(decisions):
        t0 = time.process_time()
        decision = policy.decide(tree.view(pending_expansions=0), rng)
        cpu += time.process_time() - t0
        if decision is None:
            break
        kind = type(decision).__name__
        kinds[kind] += 1
        digest.update(repr((kind, decision.node_id, getattr(decision, "instance", None), decision.detail)).encode())
        if isinstance(decision, Evaluate):
            tree.start_evaluation(decision.node_id, decision.instance)
            flying.append((decision.node_id, decision.instance))
        else:
            parent = decision.node_id
            tree.add_node(parent, bool(world.random() >= 0.15))
            syn.quality.append(child_quality(syn.quality[parent], "mixed", world))
        if len(flying) >= workers:
            node, instance = flying.pop(int(world.integers(len(flying))))
            tree.finish_evaluation(node, instance, score(syn.quality[node], world))
    done = sum(kinds.values())
    return {"nodes": n, "cpu_ms": 1e3 * cpu / done, "decisions": done, **kinds, "digest": digest.hexdigest()[:16]}


def run_in(root: Path, n: int, decisions: int, workers: int, seed: int) -> dict:
    """`measure` in a fresh process importing the checkout at root."""
    command = [sys.executable, str(Path(__file__).resolve()), "--one", str(n), "--root", str(root)]
    command += ["--decisions", str(decisions), "--workers", str(workers), "--seed", str(seed)]
    out = subprocess.run(command, capture_output=True, text=True, check=True, cwd=root)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--decisions", type=int, default=2000, help="decisions timed per tree (default 2000)")
    parser.add_argument("--workers", type=int, default=8, help="evaluations in flight (default 8, as bench_cluster)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--against", type=Path, help="another checkout, measured in turn with this one")
    parser.add_argument("--root", type=Path, default=HERE, help=argparse.SUPPRESS)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one is not None:  # a child process: one size, one checkout
        sys.path[:0] = [str(args.root), str(args.root / "scripts")]
        print(json.dumps(measure(args.one, args.decisions, args.workers, args.seed)))
        return 0
    if args.against is not None and not (args.against / "search" / "hgm.py").is_file():
        print(f"bench_decision: {args.against} is not a Clade checkout (no search/hgm.py)", file=sys.stderr)
        return 2
    print(
        f"HGM decision, CPU ms (tree.view + HGMPolicy.decide), 'mixed' trees, {args.workers} in flight, "
        f"{args.decisions} decisions per tree, seed {args.seed}; load average {os.getloadavg()}"
    )
    print("    nodes | checkout                         | CPU ms/decision | evaluations expansions | digest")
    same = True
    for n in args.sizes:
        rows = [("this", run_in(HERE, n, args.decisions, args.workers, args.seed))]
        if args.against is not None:
            rows.append((str(args.against), run_in(args.against, n, args.decisions, args.workers, args.seed)))
            same &= rows[0][1]["digest"] == rows[1][1]["digest"]
        for name, r in rows:
            print(
                f"  {n:>7} | {name[-32:]:<32} | {r['cpu_ms']:>15.3f} | {r['Evaluate']:>11} {r['Expand']:>10} | "
                f"{r['digest']}"
            )
        if args.against is not None:
            print(f"  {'':>7} | {'ratio old / this':<32} | {rows[1][1]['cpu_ms'] / rows[0][1]['cpu_ms']:>15.2f} |")
    if args.against is not None:
        print("same decisions in both checkouts: " + ("yes" if same else "NO"))
    print(f"load average at the end: {os.getloadavg()}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
