"""Every search policy on the built-in tasks with the offline mutator: the final node's holdout score and raw metric.

    python scripts/bench_tasks.py                      # every policy, binpack and circle_packing, seeds 0..4
    python scripts/bench_tasks.py --tasks binpack --policies hgm dgm greedy --seeds 3
    python scripts/bench_tasks.py --quick              # 2 policies, 1 seed, small budgets, no markdown

Each search is the real command line, one at a time, in a temporary run
folder removed at the end: `python -m engine.search --task T --policy P
--seed S --budget B --quiet` (default workers and sandbox: two workers and
`auto` on this machine; no model, so the offline mutator). Budgets: binpack
200 dev evaluations (16 dev instances: the README's default search);
circle_packing 60 (one instance, so 60 evaluated agents). `humaneval` and
`arc` are left out: their agents call a model, and no model answers offline.

Read from each run's archive: the final node (its `select_final` event), its
mean holdout score, and its raw metric on holdout: for binpack the excess of
bins over the L1 lower bound in % (lower is better), for circle_packing the
sum of the 26 radii (higher is better; AlphaEvolve's best known is 2.635).
Printed per task and policy over the seeds: the mean holdout score with a
95 % interval (mean +- 1.96 sd / sqrt(n), normal approximation), the mean and
the best raw metric, the final node's id and the nodes grown (means), and
the mean wall time of one search; the seed agent's figures come first. The
tables go to docs/bench_tasks.md unless `--no-markdown` (or `--quick`).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # `python scripts/X.py` puts scripts/, not the checkout, on the path
    sys.path.insert(0, str(REPO))


@dataclass(frozen=True)
class TaskBench:
    name: str
    budget: int
    quick_budget: int
    metric_key: str  # a holdout evaluation's raw metric: this key of its metrics JSON ...
    metric_name: str
    higher_is_better: bool
    metric_scale: float = 1.0  # ... times this (100: a share shown in %)


TASKS = {
    "binpack": TaskBench("binpack", 200, 40, "excess", "excess over L1, %", False, 100.0),
    "circle_packing": TaskBench("circle_packing", 60, 8, "sum_radii", "sum of radii", True),
}


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def node_figures(archive, node: int, split: str, task: TaskBench, ok_only: bool = False) -> tuple:
    """(mean score, mean raw metric) of a node's evaluations on a split (`ok_only`: those with status ok);
    None for a mean with nothing to average (a metric missing from an evaluation is left out)."""
    rows = [e for e in archive.evaluations(split) if e.node_id == node and (e.status == "ok" or not ok_only)]
    metrics = [e.metrics.get(task.metric_key) for e in rows]
    return (
        _mean([float(e.score) for e in rows]),
        _mean([task.metric_scale * float(m) for m in metrics if m is not None]),
    )


def read_run(archive: Path, task: TaskBench) -> dict:
    """The final node and the holdout figures of it and of the seed (node 0)."""
    from archive import Archive
    from engine.runinfo.reading import final_choice

    with Archive.open(archive, read_only=True) as opened:
        final = final_choice(opened)[0]  # type: ignore[index]
        figures = {who: node_figures(opened, node, "holdout", task) for who, node in (("final", final), ("seed", 0))}
        nodes = sum(opened.node_status_counts().values())
    return {"final_node": int(final), "nodes": int(nodes), **figures}


def searched(options: list[str], runs: Path, cwd: Path = REPO) -> tuple[Path, float]:
    """Run `python -m engine.search OPTIONS --run-dir RUNS --quiet` (the engine of the checkout `cwd`): the
    run's archive and the search's wall seconds; a failed search raises with its last line of stderr."""
    command = [sys.executable, "-m", "engine.search", *options, "--run-dir", str(runs), "--quiet"]
    start = time.perf_counter()
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True")
    out = subprocess.run(command, check=False, cwd=cwd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"{shlex.join(command[1:])} exited {out.returncode}: {last}")
    (run,) = list(runs.iterdir())
    return run / "archive.duckdb", wall


def run_search(task: TaskBench, policy: str, seed: int, budget: int, folder: Path) -> tuple[dict, float]:
    options = ["--task", task.name, "--policy", policy, "--seed", str(seed), "--budget", str(budget)]
    archive, wall = searched(options, folder / f"{task.name}-{policy}-{seed}")
    return read_run(archive, task), wall


def interval(values: list[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95 % normal interval (0 for one value)."""
    mean = sum(values) / len(values)
    if len(values) < 2:
        return mean, 0.0
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
    return mean, 1.96 * sd / math.sqrt(len(values))


def summarize(task: TaskBench, policy: str, results: list[tuple[dict, float]]) -> dict:
    scores = [r["final"][0] for r, _ in results]
    metrics = [r["final"][1] for r, _ in results]
    mean, half = interval(scores)
    best = max(metrics) if task.higher_is_better else min(metrics)
    return {
        "policy": policy,
        "score": mean,
        "half": half,
        "metric": sum(metrics) / len(metrics),
        "best": best,
        "final": sum(r["final_node"] for r, _ in results) / len(results),
        "nodes": sum(r["nodes"] for r, _ in results) / len(results),
        "wall": sum(w for _, w in results) / len(results),
        "runs": len(results),
    }


def table(task: TaskBench, rows: list[dict], seed_figures: tuple[float, float]) -> list[str]:
    """Markdown rows, the seed agent first; also what is printed."""
    lines = [
        (
            f"| policy | holdout score [95% interval] | mean {task.metric_name} | best {task.metric_name} "
            "| final node (mean id) | nodes grown | wall s per search |"
        ),
        "| --- | --- | --- | --- | --- | --- | --- |",
        f"| seed agent | {seed_figures[0]:.3f} | {seed_figures[1]:.3f} | {seed_figures[1]:.3f} | 0 | 1 | |",
    ]
    for row in rows:
        lines.append(
            f"| `{row['policy']}` | {row['score']:.3f} [{row['score'] - row['half']:.3f}, "
            f"{row['score'] + row['half']:.3f}] | {row['metric']:.3f} | {row['best']:.3f} | "
            f"{row['final']:.1f} | {row['nodes']:.1f} | {row['wall']:.1f} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    from search import POLICIES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), help=f"default: {' '.join(TASKS)}")
    parser.add_argument("--policies", nargs="+", help="default: every name in search.POLICIES")
    parser.add_argument("--seeds", type=int, help="seeds 0..N-1 per task and policy (default 5)")
    parser.add_argument("--budget", type=int, help="dev evaluations per search, every task (default: the task's)")
    parser.add_argument("--quick", action="store_true", help="hgm and greedy, one seed, small budgets, no markdown")
    parser.add_argument("--markdown", type=Path, default=REPO / "docs" / "bench_tasks.md")
    parser.add_argument("--no-markdown", action="store_true")
    args = parser.parse_args(argv)
    unknown = [t for t in args.tasks if t not in TASKS] + [p for p in args.policies or () if p not in POLICIES]
    if unknown:
        print(
            f"error: unknown task or policy {', '.join(unknown)}; tasks: {', '.join(TASKS)}; "
            f"policies: {', '.join(POLICIES)}",
            file=sys.stderr,
        )
        return 2
    if args.seeds is not None and args.seeds < 1 or args.budget is not None and args.budget < 1:
        print("error: --seeds and --budget must be 1 or more", file=sys.stderr)
        return 2
    policies = args.policies or (["hgm", "greedy"] if args.quick else list(POLICIES))
    seeds = args.seeds or (1 if args.quick else 5)
    write = not (args.no_markdown or args.quick)

    started = time.perf_counter()
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    command = "python3 scripts/bench_tasks.py" + "".join(" " + shlex.quote(a) for a in (argv or sys.argv[1:]))
    out = [
        "# Search policies on the built-in tasks\n",
        (f"Produced by `{command}` (its docstring says what is measured and how).\n"),
        (
            f"Run {stamp} on {platform.platform()}, {os.cpu_count()} cpus, load {load} at "
            f"the start; seeds 0..{seeds - 1}; offline mutator; default workers and sandbox.\n"
        ),
    ]
    total = len(args.tasks) * len(policies) * seeds
    done = 0
    with tempfile.TemporaryDirectory(prefix="clade-bench-tasks-") as tmp:
        for name in args.tasks:
            task = TASKS[name]
            budget = args.budget or (task.quick_budget if args.quick else task.budget)
            rows, seed_figures = [], None
            for policy in policies:
                results = []
                for seed in range(seeds):
                    try:
                        figures, wall = run_search(task, policy, seed, budget, Path(tmp))
                    except RuntimeError as error:
                        print(f"error: {error}", file=sys.stderr)
                        return 1
                    results.append((figures, wall))
                    seed_figures = seed_figures or figures["seed"]
                    done += 1
                    print(
                        f"  [{done}/{total}] {name} {policy} seed {seed}: node {figures['final_node']}, "
                        f"holdout score {figures['final'][0]:.3f}, "
                        f"{task.metric_name} {figures['final'][1]:.3f}, {wall:.1f} s "
                        f"({time.perf_counter() - started:.0f} s in)",
                        flush=True,
                    )
                rows.append(summarize(task, policy, results))
            lines = table(task, rows, seed_figures)
            title = (
                f"## {name}: budget {budget} dev evaluations, {task.metric_name} "
                f"({'higher' if task.higher_is_better else 'lower'} is better)"
            )
            print("\n" + title + "\n" + "\n".join(lines) + "\n", flush=True)
            out += [title + "\n", *lines, ""]
    wall = time.perf_counter() - started
    out.append(f"{total} searches in {wall / 60:.1f} min.")
    print(out[-1])
    if write:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text("\n".join(out) + "\n")
        print(f"tables written to {args.markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
