"""The built-in compiled task (binpack_cpp, issue 17) under three policies: the final node's dev and holdout figures.

    python scripts/bench_binpack_cpp.py                          # hgm, dgm, openevolve; seeds 0..4; budget 40
    python scripts/bench_binpack_cpp.py --policies hgm --seeds 1 --budget 8

Each search is the real command line, one at a time, through
`scripts/bench_tasks.run_search`: `python -m engine.search --task binpack_cpp
--policy P --seed S --budget B --quiet` (default workers and sandbox, no
model, so the offline mutator edits the C++ priority function on its
tree-sitter tree), in a temporary run folder removed at the end.

Read from each run's archive: the final node (its `select_final` event), its
mean score and mean excess of bins over the L1 lower bound (%) on the dev
and on the holdout instances, and the same for the seed (node 0; its scores
are 0.5 by construction, every instance being scored against the seed).
Printed per policy over the seeds: mean +- sample sd of each figure, the
mean number of nodes and the mean wall time of one search, then the exact
command of every search.
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a file: `python scripts/bench_binpack_cpp.py`
    sys.path.insert(0, str(REPO))

from scripts.bench_tasks import TaskBench, node_figures, run_search  # noqa: E402

TASK = TaskBench("binpack_cpp", 40, 8, "excess", "excess over L1, %", False, 100.0)
POLICIES = ("hgm", "dgm", "openevolve")  # hgm is the default policy


def split_figures(archive: Path) -> dict:
    """(mean score, mean excess %) of the final node and of the seed on each split."""
    from archive import Archive
    from engine.runinfo.reading import final_choice

    with Archive.open(archive, read_only=True) as opened:
        final = final_choice(opened)[0]  # type: ignore[index]
        out = {
            f"{who}_{split}": node_figures(opened, node, split, TASK, ok_only=True)
            for who, node in (("final", final), ("seed", 0))
            for split in ("dev", "holdout")
        }
        out["nodes"] = sum(opened.node_status_counts().values())
    return {"final_node": int(final), **out}


def mean_sd(values: list[float]) -> str:
    """'mean ± sample sd' (sd 0 for one value)."""
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1)) if len(values) > 1 else 0.0
    return f"{mean:.3f} ± {sd:.3f}"


def command_of(policy: str, seed: int, budget: int) -> str:
    return shlex.join(
        [
            "python",
            "-m",
            "engine.search",
            "--task",
            TASK.name,
            "--policy",
            policy,
            "--seed",
            str(seed),
            "--budget",
            str(budget),
            "--quiet",
        ]
    )


def table(rows: dict[str, list[dict]]) -> list[str]:
    """Markdown rows: the seed agent first, then one per policy (mean ± sd over its seeds)."""
    head = [
        "| agent | dev score | holdout score | dev excess % | holdout excess % | final node | nodes | wall s |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    first = next(iter(rows.values()))[0]
    head.append(
        f"| seed agent | {first['seed_dev'][0]:.3f} | {first['seed_holdout'][0]:.3f} | "
        f"{first['seed_dev'][1]:.3f} | {first['seed_holdout'][1]:.3f} | 0 | 1 | |"
    )
    for policy, runs in rows.items():
        dev, hold = [r["final_dev"] for r in runs], [r["final_holdout"] for r in runs]
        head.append(
            f"| `{policy}` | {mean_sd([d[0] for d in dev])} | {mean_sd([h[0] for h in hold])} | "
            f"{mean_sd([d[1] for d in dev])} | {mean_sd([h[1] for h in hold])} | "
            f"{sum(r['final_node'] for r in runs) / len(runs):.1f} | "
            f"{sum(r['nodes'] for r in runs) / len(runs):.1f} | "
            f"{sum(r['wall'] for r in runs) / len(runs):.1f} |"
        )
    return head


def main(argv: list[str] | None = None) -> int:
    from search import POLICIES as KNOWN

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policies", nargs="+", default=list(POLICIES), help=f"default: {' '.join(POLICIES)}")
    parser.add_argument("--seeds", type=int, default=5, help="search seeds 0..N-1 per policy (default 5)")
    parser.add_argument("--budget", type=int, default=TASK.budget, help=f"dev evaluations (default {TASK.budget})")
    args = parser.parse_args(argv)
    unknown = [p for p in args.policies if p not in KNOWN]
    if unknown or args.seeds < 1 or args.budget < 1:
        print(
            f"error: unknown policy {', '.join(unknown)} (known: {', '.join(KNOWN)})"
            if unknown
            else "error: --seeds and --budget must be 1 or more",
            file=sys.stderr,
        )
        return 2
    started = time.perf_counter()
    rows: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory(prefix="clade-bench-binpack-cpp-") as tmp:
        for policy in args.policies:
            for seed in range(args.seeds):
                try:
                    _, wall = run_search(TASK, policy, seed, args.budget, Path(tmp))
                except RuntimeError as error:
                    print(f"error: {error}", file=sys.stderr)
                    return 1
                (run,) = list((Path(tmp) / f"{TASK.name}-{policy}-{seed}").iterdir())
                figures = {**split_figures(run / "archive.duckdb"), "wall": wall}
                rows.setdefault(policy, []).append(figures)
                print(
                    f"  {policy} seed {seed}: final node {figures['final_node']}, dev score "
                    f"{figures['final_dev'][0]:.3f}, holdout score {figures['final_holdout'][0]:.3f}, holdout "
                    f"excess {figures['final_holdout'][1]:.3f} %, {wall:.1f} s "
                    f"({time.perf_counter() - started:.0f} s in)",
                    flush=True,
                )
    print(
        f"\n## binpack_cpp: budget {args.budget} dev evaluations, seeds 0..{args.seeds - 1}, offline mutator "
        "(mean ± sd over seeds; excess over L1 in %, lower is better)"
    )
    print("\n".join(table(rows)))
    print("\nCommands:")
    for policy in args.policies:
        for seed in range(args.seeds):
            print("  " + command_of(policy, seed, args.budget))
    print(f"\n{len(args.policies) * args.seeds} searches in {(time.perf_counter() - started) / 60:.1f} min.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
