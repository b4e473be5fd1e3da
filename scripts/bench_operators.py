"""The offline mutator's operators, one by one: how many children each made and what share of them failed, and
whether the default search improved on each task's seed.

    python scripts/bench_operators.py                                   # seven tasks, seeds 0..4, budget 60
    python scripts/bench_operators.py --tasks binpack openevolve_random_search --seeds 3 --jobs 2
    python scripts/bench_operators.py --tasks /path/to/openevolve/examples/x --task-python /venv/bin/python
    python scripts/bench_operators.py --checkout /work/wt-before         # the same measurement of another checkout

Tasks: `binpack` and `circle_packing` (built in), a folder of
tests/fixtures/tasks by its name, or any task folder's path. Each search is
the real command line with the default policy and the offline mutator, in a
temporary run folder removed at the end: `python -m engine.search --task T
--seed S --budget B --run-dir <tmp> --quiet` (plus `--task-python P` for a
folder when given), run from `--checkout` (default this checkout; the
archives are read with this checkout's code, the schema being additive).

Per operator (a child counts for every operator its description names,
`engine.mutators.operators_in`), over all tasks and seeds:
- made: children stored (valid or invalid) that name it;
- gate: attempts the mutator itself threw away because the child failed its
  static check (`check_child` and the pyflakes gate), counted per operator in
  the expand event's `gate_rejected` (a checkout that does not record them:
  shown as n/a and left out of the shares; with `--read`, known only for an
  operator some event names);
- duplicate: children stored invalid as a duplicate or near-duplicate of an
  existing node (a wasted child, not a broken program: shown apart, not in
  failing);
- sandbox: children stored invalid for any other reason (the loop's checks
  refused them), or whose first dev evaluation ended with status error,
  timeout, killed or bad_output;
- evaluator: children whose first dev evaluation has status
  `failed_in_evaluator`, or status `ok` while the evaluator reported an error
  (its feedback has an `error:`/`errors:` entry, `correct: false`, or the
  captured stderr a Python traceback), so that a checkout without that status
  is classified the same way;
- failing: (gate + sandbox + evaluator) / (made + gate), the share of the
  operator's attempts that gave no working program. Children never evaluated
  (the budget ran out first) are left out of made.
Per task: the seed agent's raw holdout metric, the final node's per seed, and
on how many seeds the final node beat the seed (strictly, in the task's
direction).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # `python scripts/bench_operators.py` puts scripts/, not the checkout, on the path
    sys.path.insert(0, str(REPO))

from scripts.bench_tasks import TASKS as BUILTIN  # noqa: E402
from scripts.bench_tasks import TaskBench, read_run, searched  # noqa: E402

FIXTURES = REPO / "tests" / "fixtures" / "tasks"
DEFAULT_TASKS = (
    "metric_value_sine",
    "openevolve_minimize",
    "openevolve_random_search",
    "public_private_regression",
    "shinka_spread",
    "circle_packing",
    "binpack",
)
SANDBOX_FAILURES = frozenset({"error", "timeout", "killed", "bad_output"})
# an `error:`/`errors:` entry whose value is not a number (a metric named "error", as metric_value_sine's, is
# not a failure), or `correct: false`
EVALUATOR_ERROR = re.compile(r"(?:^|[;\n{,]\s*)['\"]?errors?['\"]?\s*[:=]\s*([^;\n]*)", re.I)
INCORRECT = re.compile(r"correct['\"]?\s*[:=]\s*false", re.I)
DUPLICATE = re.compile(r"(near-)?duplicate of node", re.I)


def resolve(name: str) -> tuple[TaskBench, str, bool]:
    """The task's bench figures, what `--task` gets and whether it is a folder."""
    if name in BUILTIN:
        return BUILTIN[name], name, False
    folder = FIXTURES / name if (FIXTURES / name).is_dir() else Path(name).resolve()
    if not folder.is_dir():
        raise ValueError(f"no task {name!r}: not built in, not a folder of {FIXTURES}, not a folder")
    from tasks import make_task

    task = make_task(str(folder))
    return TaskBench(folder.name, 60, 8, "metric", task.raw_metric, bool(task.higher_is_better)), str(folder), True


def evaluator_error(status: str, feedback: str | None, stderr: str | None) -> bool:
    """A first evaluation the evaluator itself reported as failed (module docstring)."""
    if status == "failed_in_evaluator":
        return True
    if status != "ok":
        return False
    text = feedback or ""
    if INCORRECT.search(text) or "Traceback (most recent call last)" in (stderr or ""):
        return True
    return any(not _is_number(value) for value in EVALUATOR_ERROR.findall(text))


def _is_number(text: str) -> bool:
    try:
        float(text.strip().rstrip(",}").strip("'\""))
    except ValueError:
        return False
    return True


def operator_outcomes(archive_path: Path) -> dict[str, Counter]:
    """Per operator: made, gate, sandbox, evaluator (counts) and whether gate rejections were recorded."""
    from archive import Archive
    from engine.mutators import operators_in

    out: dict[str, Counter] = {}
    with Archive.open(archive_path, read_only=True) as opened:
        first: dict[int, tuple[str, str | None, str | None]] = {}
        for ev in opened.evaluations("dev"):
            if not ev.repeat and ev.node_id not in first:
                first[ev.node_id] = (ev.status, ev.feedback, ev.stderr_tail)
        for node in opened.nodes():
            if node.parent_id is None:
                continue
            ops = operators_in(node.description or "")
            kind: str | None
            if node.status == "invalid":
                kind = "duplicate" if DUPLICATE.match(node.reason or "") else "sandbox"
            elif node.status != "valid" or node.id not in first:
                kind = None if node.status == "valid" else "skip"  # unevaluated, or failed: no child
            else:
                status, feedback, stderr = first[node.id]
                kind = (
                    "sandbox"
                    if status in SANDBOX_FAILURES
                    else "evaluator"
                    if evaluator_error(status, feedback, stderr)
                    else "fine"
                )
            if kind in (None, "skip"):
                continue
            for op in ops:
                counts = out.setdefault(op, Counter())
                counts["made"] += 1
                if kind != "fine":
                    counts[kind] += 1
        for *_, detail in opened.events("expand"):
            rejected = detail.get("gate_rejected")
            if rejected is None:
                continue
            for op, n in rejected.items():
                counts = out.setdefault(op, Counter())
                counts["gate"] += int(n)
                counts["gate_recorded"] = 1
    return out


def run_one(checkout: Path, task: TaskBench, arg: str, folder_task: bool, seed: int, budget: int, args, tmp: Path):
    options = ["--task", arg, "--seed", str(seed), "--budget", str(budget)]
    if folder_task and args.task_python:
        options += ["--task-python", args.task_python]
    archive, wall = searched(options, tmp / f"{task.name}-{seed}", cwd=checkout)
    return read_run(archive, task), operator_outcomes(archive), wall


def number(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.4f}" if value == 0 or 0.01 <= abs(value) < 1e4 else f"{value:.4g}"


def beats(task: TaskBench, value: float | None, seed_value: float | None) -> bool:
    if value is None or seed_value is None:
        return False
    return value > seed_value if task.higher_is_better else value < seed_value


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"


def records_gate(checkout: Path) -> bool:
    """Does the checkout's engine record the gate's refusals (an expand event without them then means none)?"""
    expansion = checkout / "engine" / "loop" / "expansion.py"
    return expansion.is_file() and "gate_rejected" in expansion.read_text()


def operator_table(totals: dict[str, Counter], gate_recorded: bool = False) -> list[str]:
    """One row per operator; `gate_recorded`: the engine recorded the gate's refusals even where an archive
    has none (else an operator's gate column is known only when some event of it names the operator)."""
    lines = [
        "| operator | made | gate | sandbox | evaluator | failing | duplicate |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for op in sorted(totals, key=lambda o: -totals[o]["made"]):
        c = totals[op]
        recorded = gate_recorded or bool(c["gate_recorded"])
        attempts = c["made"] + (c["gate"] if recorded else 0)
        failing = c["sandbox"] + c["evaluator"] + (c["gate"] if recorded else 0)
        gate = percent(c["gate"], attempts) if recorded else "n/a"
        lines.append(
            f"| `{op}` | {c['made']} | {gate} | {percent(c['sandbox'], attempts)} | "
            f"{percent(c['evaluator'], attempts)} | {percent(failing, attempts)} | "
            f"{percent(c['duplicate'], attempts)} |"
        )
    return lines


def task_table(rows: list[tuple[TaskBench, list[tuple[int, dict]]]]) -> list[str]:
    lines = [
        "| task | raw metric | seed agent | final node per seed | improved on the seed |",
        "| --- | --- | --- | --- | --- |",
    ]
    for task, results in rows:
        results = sorted(results, key=lambda r: r[0])
        seed_metric = results[0][1]["seed"][1] if results else None
        finals = ", ".join(number(r["final"][1]) for _, r in results)
        improved = sum(beats(task, r["final"][1], r["seed"][1]) for _, r in results)
        way = "higher" if task.higher_is_better else "lower"
        lines.append(
            f"| {task.name} | {task.metric_name} ({way} is better) | {number(seed_metric)} | {finals} | "
            f"{improved}/{len(results)} |"
        )
    return lines


def summarize_kept(folders: list[Path]) -> int:
    """The two tables of kept run folders (`<task>-<seed>/<run>/archive.duckdb`), tasks in DEFAULT_TASKS' order."""
    by_task: dict[str, list[tuple[int, Path]]] = {}
    for folder in folders:
        for runs in sorted(folder.iterdir()):
            name, _, seed_text = runs.name.rpartition("-")
            archives = list(runs.glob("*/archive.duckdb"))
            if archives and seed_text.isdigit():
                by_task.setdefault(name, []).append((int(seed_text), archives[0]))
    order = sorted(by_task, key=lambda n: DEFAULT_TASKS.index(n) if n in DEFAULT_TASKS else len(DEFAULT_TASKS))
    totals: dict[str, Counter] = {}
    per_task = []
    for name in order:
        task = resolve(name)[0]
        results = []
        for seed, archive in sorted(by_task[name]):
            results.append((seed, read_run(archive, task)))
            for op, counts in operator_outcomes(archive).items():
                totals.setdefault(op, Counter()).update(counts)
                totals[op]["gate_recorded"] = min(totals[op]["gate_recorded"], 1)
        per_task.append((task, results))
    print("\n".join(operator_table(totals)) + "\n")
    print("\n".join(task_table(per_task)))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=list(DEFAULT_TASKS), help="names or folders")
    parser.add_argument("--seeds", type=int, default=5, help="seeds 0..N-1 per task (default 5)")
    parser.add_argument("--first-seed", type=int, default=0, help="seeds K..K+N-1 instead (default 0)")
    parser.add_argument("--budget", type=int, default=60, help="dev evaluations per search (default 60)")
    parser.add_argument("--task-python", help="the Python that runs a task folder's evaluator (its own venv)")
    parser.add_argument("--jobs", type=int, default=1, help="searches at once (default 1; each uses 2 workers)")
    parser.add_argument("--checkout", type=Path, default=REPO, help="the Clade checkout whose engine runs")
    parser.add_argument("--keep", type=Path, help="keep the run folders here (default: a temporary folder, removed)")
    parser.add_argument(
        "--read", type=Path, nargs="+", help="run nothing: the tables of the run folders kept in these --keep folders"
    )
    args = parser.parse_args(argv)
    if args.read:
        return summarize_kept(args.read)
    if args.seeds < 1 or args.budget < 1 or args.jobs < 1 or args.first_seed < 0:
        print("error: --seeds, --budget and --jobs must be 1 or more, --first-seed 0 or more", file=sys.stderr)
        return 2
    if not (args.checkout / "engine" / "search.py").is_file():
        print(f"error: --checkout {args.checkout} is not a Clade checkout", file=sys.stderr)
        return 2
    try:
        tasks = [resolve(name) for name in args.tasks]
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.platform()}, {os.cpu_count()} cpus, load {load}; "
        f"checkout {args.checkout.resolve()}; budget {args.budget}, seeds {args.first_seed}.."
        f"{args.first_seed + args.seeds - 1}, {args.jobs} at once",
        flush=True,
    )
    started = time.perf_counter()
    totals: dict[str, Counter] = {}
    per_task: list[tuple[TaskBench, list[tuple[int, dict]]]] = []
    if args.keep is not None and args.keep.exists() and any(args.keep.iterdir()):
        print(f"error: --keep {args.keep} is not empty", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="clade-bench-operators-") as scratch, ThreadPoolExecutor(args.jobs) as pool:
        tmp = str(args.keep) if args.keep is not None else scratch
        for task, arg, folder_task in tasks:
            futures = {
                seed: pool.submit(run_one, args.checkout, task, arg, folder_task, seed, args.budget, args, Path(tmp))
                for seed in range(args.first_seed, args.first_seed + args.seeds)
            }
            results = []
            for seed, future in futures.items():
                try:
                    figures, outcomes, wall = future.result()
                except RuntimeError as error:
                    print(f"error: {error}", file=sys.stderr)
                    return 1
                results.append((seed, figures))
                for op, counts in outcomes.items():
                    totals.setdefault(op, Counter()).update(counts)
                    totals[op]["gate_recorded"] = min(totals[op]["gate_recorded"], 1)
                print(
                    f"  {task.name} seed {seed}: final node {figures['final_node']}, "
                    f"{number(figures['final'][1])} (seed agent {number(figures['seed'][1])}), {wall:.1f} s "
                    f"({time.perf_counter() - started:.0f} s in)",
                    flush=True,
                )
            per_task.append((task, results))
    print("\n" + "\n".join(operator_table(totals, records_gate(args.checkout))) + "\n")
    print("\n".join(task_table(per_task)) + "\n")
    print(f"{len(tasks) * args.seeds} searches in {(time.perf_counter() - started) / 60:.1f} min.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
