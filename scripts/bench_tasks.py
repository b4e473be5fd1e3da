"""Every search policy on the built-in tasks with the offline mutator: the final node's holdout score and raw metric.

    python scripts/bench_tasks.py                      # every policy, binpack and circle_packing, seeds 0..4
    python scripts/bench_tasks.py --tasks binpack --policies hgm dgm greedy --seeds 3
    python scripts/bench_tasks.py --quick              # 2 policies, 1 seed, small budgets, no markdown

A thin caller of `clade sweep`, the command a user runs: per task one sweep,
`clade sweep --task T --grid policy=P1,P2,... --seeds N --budget B
--sweep-dir DIR --quiet` (the offline mutator; each cell one worker, so a
cell's run is reproducible from its seed, and as many cells at once as the
CPUs hold; `--sandbox` and `--parallel` pass through). The sweeps stay in
`--sweep-dir` (default sweeps/bench_tasks): `clade sweep show` and `clade
report` read them, and the same command, interrupted, goes on where it
stopped. Budgets: binpack 200 dev evaluations (16 dev instances: the
README's default search); circle_packing 60 (one instance, so 60 evaluated
agents). `humaneval` and `arc` are left out: their agents call a model, and
no model answers offline.

Read from the sweep (engine/sweep/results.py, engine/sweep/stats.py) and
each cell's archive: the final node, its mean holdout score, and its raw
metric on holdout: for binpack the excess of bins over the L1 lower bound in
% (lower is better), for circle_packing the sum of the 26 radii (higher is
better; AlphaEvolve's best known is 2.635). Printed per task and policy over
the seeds: the mean holdout score with its 95 % bootstrap interval (the
sweep's: percentile, over seeds), the mean and the best raw metric, the
final node's id and the nodes grown (means), and the mean engine time of
one search; the seed agent's figures come first. The tables go to
docs/bench_tasks.md unless `--no-markdown` (or `--quick`).
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
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
    """One search, `python -m engine.search OPTIONS --run-dir RUNS --quiet` (the engine of the checkout `cwd`),
    for the benchmarks that run single searches (bench_operators, bench_binpack_cpp): the run's archive and
    the search's wall seconds; a failed search raises with its last line of stderr."""
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
    """One search of `task` (searched), its figures read back (read_run)."""
    options = ["--task", task.name, "--policy", policy, "--seed", str(seed), "--budget", str(budget)]
    archive, wall = searched(options, folder / f"{task.name}-{policy}-{seed}")
    return read_run(archive, task), wall


def swept(task: str, policies: list[str], seeds: int, budget: int, extra: list[str]) -> Path:
    """`clade sweep --task TASK` over the policies (in this process, as the command runs it); the sweep's folder."""
    from engine.sweep.cli import found
    from engine.sweep.cli import main as sweep_main

    argv = ["--task", task, "--grid", "policy=" + ",".join(policies), "--seeds", str(seeds)]
    argv += ["--budget", str(budget), "--quiet", *extra]
    code = sweep_main(argv)
    folder = found(argv)
    if code != 0 or folder is None:
        raise RuntimeError(f"clade sweep {shlex.join(argv)} exited {code}")
    return folder.folder


def summarize(task: TaskBench, policy: str, runs: list[tuple[dict, float]]) -> dict:
    """A policy's row: the sweep's interval of the mean holdout score, and the raw metric's figures."""
    from engine.sweep.stats import mean_interval

    score = mean_interval([r["final"][0] for r, _ in runs])
    metrics = [r["final"][1] for r, _ in runs]
    return {
        "policy": policy,
        "score": score.mean,
        "low": score.low if score.low is not None else score.mean,
        "high": score.high if score.high is not None else score.mean,
        "metric": sum(metrics) / len(metrics),
        "best": max(metrics) if task.higher_is_better else min(metrics),
        "final": sum(r["final_node"] for r, _ in runs) / len(runs),
        "nodes": sum(r["nodes"] for r, _ in runs) / len(runs),
        "wall": sum(w for _, w in runs) / len(runs),
        "runs": len(runs),
    }


def cell_runs(task: TaskBench, folder: Path) -> Iterator[tuple[str, int, Path, float]]:
    """(policy, seed, archive, engine seconds) of each cell of a finished sweep, in the grid's order."""
    from engine.sweep.results import read_results

    for cell in read_results(folder).cells:
        if cell.run_path is None or cell.final_node is None:
            raise RuntimeError(f"{folder}: cell {cell.cell} is {cell.status}")
        yield str(cell.settings["policy"]), cell.seed, cell.run_path / "archive.duckdb", cell.wall_s or 0.0


def policy_rows(task: TaskBench, folder: Path) -> tuple[list[dict], tuple]:
    """Each policy's row from the sweep's cells, and the seed agent's figures (node 0 of the first cell)."""
    by_policy: dict[str, list[tuple[dict, float]]] = {}
    seed_figures = None
    for policy, seed, archive, wall in cell_runs(task, folder):
        figures = read_run(archive, task)
        seed_figures = seed_figures or figures["seed"]
        by_policy.setdefault(policy, []).append((figures, wall))
        print(
            f"  {task.name} {policy} seed {seed}: node {figures['final_node']}, holdout score "
            f"{figures['final'][0]:.3f}, {task.metric_name} {figures['final'][1]:.3f}, {wall:.1f} s"
        )
    return [summarize(task, policy, runs) for policy, runs in by_policy.items()], seed_figures


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
            f"| `{row['policy']}` | {row['score']:.3f} [{row['low']:.3f}, {row['high']:.3f}] | "
            f"{row['metric']:.3f} | {row['best']:.3f} | "
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
    parser.add_argument("--sweep-dir", type=Path, default=REPO / "sweeps" / "bench_tasks", help="where the sweeps stay")
    parser.add_argument("--parallel", type=int, help="cells at once (default: the sweep's, the CPUs)")
    parser.add_argument("--sandbox", help="the cells' sandbox (default: the search's, auto)")
    parser.add_argument("--workers", type=int, help="each search's workers (default: the sweep's, one)")
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
    extra = ["--sweep-dir", str(args.sweep_dir)]
    extra += ["--parallel", str(args.parallel)] if args.parallel else []
    extra += ["--sandbox", args.sandbox] if args.sandbox else []
    extra += ["--workers", str(args.workers)] if args.workers else []

    started = time.perf_counter()
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    command = "python3 scripts/bench_tasks.py" + "".join(" " + shlex.quote(a) for a in (argv or sys.argv[1:]))
    out = [
        "# Search policies on the built-in tasks\n",
        (f"Produced by `{command}` (its docstring says what is measured and how).\n"),
        (
            f"Run {stamp} on {platform.platform()}, {os.cpu_count()} cpus, load {load} at "
            f"the start; seeds 0..{seeds - 1}; offline mutator; {args.workers or 1} worker(s) per search, "
            "through clade sweep.\n"
        ),
    ]
    for name in args.tasks:
        task = TASKS[name]
        budget = args.budget or (task.quick_budget if args.quick else task.budget)
        try:
            folder = swept(task.name, policies, seeds, budget, extra)
            rows, seed_figures = policy_rows(task, folder)
        except RuntimeError as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
        out += section(name, task, budget, folder, table(task, rows, seed_figures))
    finish(out, len(args.tasks) * len(policies) * seeds, started, args.markdown if write else None)
    return 0


def section(name: str, task: TaskBench, budget: int, folder: Path, lines: list[str]) -> list[str]:
    """A task's table under its title, printed; returned as markdown lines."""
    title = (
        f"## {name}: budget {budget} dev evaluations, {task.metric_name} "
        f"({'higher' if task.higher_is_better else 'lower'} is better)"
    )
    print("\n" + title + "\n" + "\n".join(lines) + "\n", flush=True)
    return [title + "\n", f"The sweep: `clade sweep show {folder}`.\n", *lines, ""]


def finish(out: list[str], total: int, started: float, markdown: Path | None) -> None:
    """The closing line (searches and minutes), printed; the tables written to `markdown` unless None."""
    wall = time.perf_counter() - started
    out.append(f"{total} searches in {wall / 60:.1f} min (cells finished before this command not counted).")
    print(out[-1])
    if markdown is not None:
        markdown.parent.mkdir(parents=True, exist_ok=True)
        markdown.write_text("\n".join(out) + "\n")
        print(f"tables written to {markdown}")


if __name__ == "__main__":
    sys.exit(main())
