"""Every search policy on the single-instance continuous tasks with the offline mutator: the final node's raw
holdout metric.

    python scripts/bench_continuous.py                    # every policy, five tasks, seeds 0..4
    python scripts/bench_continuous.py --tasks circle_packing shinka_spread --policies hgm greedy --seeds 3
    python scripts/bench_continuous.py --quick            # hgm and greedy, 1 seed, small budgets, no markdown
    python scripts/bench_continuous.py --parallel 2       # two searches at once (default: the CPUs)

The tasks: `circle_packing` (budget 200; raw metric the holdout sum of the 26
radii, `metrics->>'sum_radii'`, higher is better, best known 2.635) and the
four task-folder fixtures of tests/fixtures/tasks/ (`metric_value_sine`,
`openevolve_minimize`, `public_private_regression`, `shinka_spread`; budget
60), whose raw metric is the evaluator's figure kept under `metrics->>'metric'`
(README, "Tasks and adapters"); each folder's direction (higher or lower is
better) and the metric's name are read from its task object
(`tasks.make_task(folder).higher_is_better`, `.raw_metric`), not written here.
Every task has one dev instance and a holdout rerun of it.

A thin caller of `clade sweep`, the command a user runs: per task one sweep,
`clade sweep --task T --grid policy=P1,P2,... --seeds N --budget B
--sweep-dir DIR --quiet` (no model, so the offline mutator; each cell one
worker, so a cell's run is reproducible from its seed, and as many cells at
once as the CPUs hold, or `--parallel`). The sweeps stay in `--sweep-dir`
(default sweeps/bench_continuous): `clade sweep show` and `clade report`
read them, and the same command, interrupted, goes on where it stopped. Figures are read from each run's archive with
`scripts/bench_tasks.py`'s reader (the final node is its `select_final`
event). Printed per task and policy over the seeds: the mean raw holdout
metric of the final node with a 95 % interval (the sweep's bootstrap:
percentile, over seeds), the best, how many seeds' final node beat the seed
agent (a strictly better raw holdout metric, in the task's direction) as
k/n, the share of dev evaluations that failed (every status but 'ok':
error, timeout, killed, bad_output and failed_in_evaluator, a failure the
task's evaluator caught and reported), of which the share caught by the
evaluator, the share in status 'error' alone (what this column counted
before failed_in_evaluator existed), the share of children rejected before
evaluation (nodes with status 'invalid' over every node but
node 0), the final node's mean id and the mean engine time of one search;
the seed agent's raw metric comes first. Cells at once share the machine, so
the times grow with `--parallel`. The tables go to docs/bench_continuous.md
unless `--no-markdown` (or `--quick`).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import shlex
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # `python scripts/bench_continuous.py` puts scripts/, not the checkout, on the path
    sys.path.insert(0, str(REPO))

from scripts.bench_tasks import TASKS as BUILTIN  # noqa: E402
from scripts.bench_tasks import TaskBench, cell_runs, finish, read_run, section, swept

FIXTURES = REPO / "tests" / "fixtures" / "tasks"
FOLDERS = ("metric_value_sine", "openevolve_minimize", "public_private_regression", "shinka_spread")
TASK_NAMES = ("circle_packing", *FOLDERS)
BUDGETS = {"circle_packing": (200, 16), **{name: (60, 8) for name in FOLDERS}}  # (full, --quick)


def bench_task(name: str) -> tuple[TaskBench, str]:
    """The task's bench figures and what `--task` gets (the name, or the folder's absolute path)."""
    budget, quick = BUDGETS[name]
    if name == "circle_packing":
        return dataclasses.replace(BUILTIN["circle_packing"], budget=budget, quick_budget=quick), name
    from tasks import make_task

    folder = str(FIXTURES / name)
    task = make_task(folder)
    return TaskBench(name, budget, quick, "metric", task.raw_metric, bool(task.higher_is_better)), folder


def read_extra(archive: Path) -> dict:
    """Shares of dev evaluations that failed (any status but ok), that the evaluator caught, that errored,
    and of children rejected before evaluation."""
    from archive import Archive

    with Archive.open(archive, read_only=True) as opened:
        statuses = opened.evaluation_status_counts("dev")
        dev = sum(statuses.values())
        made = [n for n in opened.nodes() if n.id != 0]
        invalid, children = sum(n.status == "invalid" for n in made), len(made)

    def share(count: int) -> float:
        return count / dev if dev else 0.0

    return {
        "failed": share(dev - statuses.get("ok", 0)),
        "caught": share(statuses.get("failed_in_evaluator", 0)),
        "errors": share(statuses.get("error", 0)),
        "rejected": invalid / children if children else 0.0,
    }


def beats(task: TaskBench, value: float | None, seed_value: float | None) -> bool:
    if value is None or seed_value is None:
        return False
    return value > seed_value if task.higher_is_better else value < seed_value


def summarize(task: TaskBench, policy: str, results: list[tuple[dict, float]]) -> dict:
    n = len(results)
    from engine.sweep.stats import mean_interval

    metrics = [r["final"][1] for r, _ in results if r["final"][1] is not None]
    estimate = mean_interval(metrics) if metrics else None
    mean = estimate.mean if estimate else None
    best = (max(metrics) if task.higher_is_better else min(metrics)) if metrics else None
    return {
        "policy": policy,
        "metric": mean,
        "low": estimate.low if estimate and estimate.low is not None else mean,
        "high": estimate.high if estimate and estimate.high is not None else mean,
        "best": best,
        "measured": len(metrics),
        "beat": sum(beats(task, r["final"][1], r["seed"][1]) for r, _ in results),
        "runs": n,
        **{key: sum(r[key] for r, _ in results) / n for key in ("failed", "caught", "errors")},
        "rejected": sum(r["rejected"] for r, _ in results) / n,
        "final": sum(r["final_node"] for r, _ in results) / n,
        "wall": sum(w for _, w in results) / n,
    }


def number(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.4f}" if value == 0 or 0.01 <= abs(value) < 1e4 else f"{value:.4g}"


def table(task: TaskBench, rows: list[dict], seed_metric: float | None) -> list[str]:
    """Markdown rows, the seed agent first; also what is printed."""
    name = task.metric_name
    lines = [
        (
            f"| policy | mean {name} [95% interval] | best {name} | beat seed | dev failed | caught by evaluator "
            "| status error | rejected | final node (mean id) | wall s per search |"
        ),
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        f"| seed agent | {number(seed_metric)} | {number(seed_metric)} | | | | | | 0 | |",
    ]
    for row in rows:
        if row["metric"] is None:
            mean = "n/a"
        else:
            mean = f"{number(row['metric'])} [{number(row['low'])}, {number(row['high'])}]"
            if row["measured"] < row["runs"]:
                mean += f" ({row['measured']} measured)"
        lines.append(
            f"| `{row['policy']}` | {mean} | {number(row['best'])} | {row['beat']}/{row['runs']} | "
            f"{100 * row['failed']:.1f}% | {100 * row['caught']:.1f}% | {100 * row['errors']:.1f}% | "
            f"{100 * row['rejected']:.1f}% | {row['final']:.1f} | "
            f"{row['wall']:.1f} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    from search import POLICIES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=list(TASK_NAMES), help=f"default: {' '.join(TASK_NAMES)}")
    parser.add_argument("--policies", nargs="+", help="default: every name in search.POLICIES")
    parser.add_argument("--seeds", type=int, help="seeds 0..N-1 per task and policy (default 5)")
    parser.add_argument("--budget", type=int, help="dev evaluations per search, every task (default: the task's)")
    parser.add_argument("--quick", action="store_true", help="hgm and greedy, one seed, small budgets, no markdown")
    parser.add_argument("--markdown", type=Path, default=REPO / "docs" / "bench_continuous.md")
    parser.add_argument("--no-markdown", action="store_true")
    parser.add_argument("--parallel", type=int, help="searches at once (default: the sweep's, the CPUs)")
    parser.add_argument("--sandbox", help="the cells' sandbox (default: the search's, auto)")
    parser.add_argument("--workers", type=int, help="each search's workers (default: the sweep's, one)")
    parser.add_argument("--sweep-dir", type=Path, default=REPO / "sweeps" / "bench_continuous")
    args = parser.parse_args(argv)
    unknown = [t for t in args.tasks if t not in TASK_NAMES] + [p for p in args.policies or () if p not in POLICIES]
    if unknown:
        print(
            f"error: unknown task or policy {', '.join(unknown)}; tasks: {', '.join(TASK_NAMES)}; "
            f"policies: {', '.join(POLICIES)}",
            file=sys.stderr,
        )
        return 2
    if any(v is not None and v < 1 for v in (args.seeds, args.budget, args.parallel)):
        print("error: --seeds, --budget and --parallel must be 1 or more", file=sys.stderr)
        return 2
    policies = args.policies or (["hgm", "greedy"] if args.quick else list(POLICIES))
    seeds = args.seeds or (1 if args.quick else 5)
    write = not (args.no_markdown or args.quick)
    extra = ["--sweep-dir", str(args.sweep_dir)]
    extra += ["--parallel", str(args.parallel)] if args.parallel else []
    extra += ["--sandbox", args.sandbox] if args.sandbox else []
    extra += ["--workers", str(args.workers)] if args.workers else []

    started = time.perf_counter()
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    command = "python3 scripts/bench_continuous.py" + "".join(" " + shlex.quote(a) for a in (argv or sys.argv[1:]))
    out = [
        "# Search policies on the single-instance continuous tasks\n",
        (f"Produced by `{command}` (its docstring says what is measured and how).\n"),
        (
            f"Run {stamp} on {platform.platform()}, {os.cpu_count()} cpus, "
            f"load {load} at the start; seeds 0..{seeds - 1}; offline mutator; {args.workers or 1} worker(s) per "
            "search, through clade sweep.\n"
        ),
    ]
    for name in args.tasks:
        task, arg = bench_task(name)
        budget = args.budget or (task.quick_budget if args.quick else task.budget)
        try:
            folder = swept(arg, policies, seeds, budget, extra)
            rows, seed_metric = policy_rows(task, folder)
        except RuntimeError as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
        out += section(name, task, budget, folder, table(task, rows, seed_metric))
    finish(out, len(args.tasks) * len(policies) * seeds, started, args.markdown if write else None)
    return 0


def policy_rows(task: TaskBench, folder: Path) -> tuple[list[dict], float | None]:
    """Each policy's row from the sweep's cells, and the seed agent's raw metric."""
    results: dict[str, list[tuple[dict, float]]] = {}
    seed_metric = None
    for policy, seed, archive, wall in cell_runs(task, folder):
        figures = {**read_run(archive, task), **read_extra(archive)}
        results.setdefault(policy, []).append((figures, wall))
        seed_metric = figures["seed"][1] if seed_metric is None else seed_metric
        print(
            f"  {task.name} {policy} seed {seed}: node {figures['final_node']}, {task.metric_name} "
            f"{number(figures['final'][1])} (seed agent {number(figures['seed'][1])}), dev failed "
            f"{100 * figures['failed']:.0f}% (caught {100 * figures['caught']:.0f}%, error "
            f"{100 * figures['errors']:.0f}%), rejected {100 * figures['rejected']:.0f}%, {wall:.1f} s",
            flush=True,
        )
    return [summarize(task, policy, runs) for policy, runs in results.items()], seed_metric


if __name__ == "__main__":
    sys.exit(main())
