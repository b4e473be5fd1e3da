"""Quality at any worker count (issue 30): the same budget with W = 1, 4, 16 and 64 evaluations in flight.

    python scripts/bench_workers.py                       # the published table: 5 policies, budgets 200 800, 30 seeds
    python scripts/bench_workers.py --seeds 5 --budgets 200 --policies hgm dgm --jobs 2
    python scripts/bench_workers.py --busy                # a real search: 64 workers, 10 s sleeping evaluations
    python scripts/bench_workers.py --binpack             # real binpack searches, evaluations padded with a sleep

OpenEvolve's users report that 1 worker found better programs than 16 at the
same budget (OpenEvolve issue #435). Clade's policies decide while evaluations
are in flight: with W workers, a decision sees up to W - 1 evaluations not yet
back, and the ones that come back first are the short ones.

Quality (the default mode). `scripts/bench_search.py`'s landscapes and search
loop (imported: `simulate`, its `World` and its families), driven by a
virtual clock: each evaluation of (node, instance) lasts a duration drawn
from a lognormal with median 1 and sigma 0.75 (`--sigma`: p90 = 2.6 x the
median, p99 = 5.7 x: a heavy right tail, as program runtimes across
instances have), fixed by a hash of (seed, node's path, instance) like its
score, so every W meets the same durations (common random numbers); the
evaluation that ends first on the clock finishes first, so with many
workers the short ones come back first. `--fail-factor F` makes an
evaluation that scores 0 last F times as long (default 1: duration
independent of the outcome; F < 1: crashes return early, F > 1: failures
time out), which biases what comes back early. Expansions take no virtual
time, as in bench_search's loop: the offline mutator's are inline and take
milliseconds, and an LLM's run in their own slots beside the evaluations
(engine/loop/scheduler.py), so an evaluation slot never waits on one; the
question here is what the policy decides with results missing, not the
mutator's latency. The budget counts started dev evaluations, exactly B per
search at every W; the root is evaluated on every dev instance first.

Reported per policy, family, budget and W: the mean hidden quality q of the
final node over the seeds with its 95 % interval (mean +- 1.96 sd /
sqrt(n)); for W > 1, the paired per-seed difference to W = 1 (same seed,
same landscape, same decision random stream) and its standard error; the
verdict per policy: W = 16 and 64 are "within" when the mean difference is
at least -2 standard errors of the paired difference, in every family and
budget. Also the virtual speed-up (clock at W = 1 / clock at W) and the
virtual busy share (evaluation time / (W x clock)).

Busy share (`--busy`). A real search, `python -m engine.search --workers 64
--budget 320 --sandbox process` on binpack, whose agent sleeps 10 s at import
(outside `priority`, so the offline mutator keeps it in every child) on 64
tiny dev instances: busy share = sum over dev evaluations of (finished_at -
started_at) / (W x (last finished_at - first started_at)), as
scripts/bench_sandbox.py's "utilization" (its archive reader and analysis are
imported), goal >= 95 %.

Binpack (`--binpack`). Real searches with the default policy, the same
sleeping agent (`--sleep`, default 1 s) on binpack's own generated
instances, at W = 1, 4, 16 (and 64 with `--binpack-workers`), a few seeds,
a small budget; reported: the final node's holdout excess (the run's
summary, `runs show`'s figure) per W and seed, and the wall time.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

import bench_search as landscapes  # noqa: E402 - after the path is set
from bench_search import FAMILIES, World, machine, mean_ci, simulate, unit  # noqa: E402

POLICIES = ("hgm", "dgm", "uct", "openevolve", "shinka")
WORKERS = (1, 4, 16, 64)
BUDGETS = (200, 800)
SEEDS = 30
SIGMA = 0.75
SALT_DURATION = 1 << 40  # beside bench_search's SALT_EVAL + instance: a duration is drawn apart from the score


@dataclass(frozen=True)
class LogNormalTime:
    """Seconds one evaluation takes: median * exp(sigma * N(0, 1)), the normal drawn from a hash of the
    node's path and the instance (the same for every W and policy); an evaluation scoring 0 lasts
    `fail_factor` times as long."""

    sigma: float = SIGMA
    median: float = 1.0
    fail_factor: float = 1.0

    def __call__(self, world: World, node: int, instance: int) -> float:
        u = min(max(unit(world.keys[node], SALT_DURATION + instance), 1e-12), 1.0 - 1e-12)
        seconds = self.median * math.exp(self.sigma * NormalDist().inv_cdf(u))
        if self.fail_factor != 1.0 and world.score(node, instance) == 0.0:
            seconds *= self.fail_factor
        return seconds


@dataclass
class Run:
    policy: str
    family: str
    budget: int
    workers: int
    seed: int
    final_q: float = float("nan")
    evaluations: int = 0
    clock: float = 0.0
    busy: float = 0.0
    depth: int = 0  # the deepest node of the tree
    error: str = ""


def run_one(task: tuple) -> Run:
    policy, family, budget, workers, seed, timing = task
    run = Run(policy, family, budget, workers, seed)
    try:
        out, tree, _ = simulate(policy, family, budget, seed, workers=workers, duration=timing)
    except Exception as error:  # noqa: BLE001 - a policy's bug is reported in its row
        run.error = f"{type(error).__name__}: {error}"[:300]
        return run
    run.final_q, run.evaluations, run.clock, run.busy = out.final_q, tree.evaluations_done, out.clock, out.busy
    run.depth = int(tree.depth[: tree.n].max())
    return run


def paired(base: dict[int, float], other: dict[int, float]) -> tuple[float, float, int]:
    """Mean of other - base over the seeds both have, its standard error, and the seeds used."""
    seeds = sorted(set(base) & set(other))
    d = np.asarray([other[s] - base[s] for s in seeds])
    if len(d) < 2:
        return float("nan"), float("nan"), len(d)
    return float(d.mean()), float(d.std(ddof=1) / math.sqrt(len(d))), len(d)


def table(headers: list[str], rows: list[list[str]], markdown: bool) -> list[str]:
    return landscapes.table(headers, rows, markdown)


def quality_tables(
    results: dict, policies: list[str], families: list[str], budgets: list[int], workers: list[int], markdown: bool
) -> tuple[list[str], dict[str, list[str]]]:
    """The tables, and per policy the cells (family, budget, W) where W > 1 falls below W = 1 by > 2 SE."""
    lines: list[str] = []
    losses: dict[str, list[str]] = {p: [] for p in policies}
    base_w = min(workers)
    for budget in budgets:
        lines += [
            "",
            f"Budget {budget}: mean final hidden q [95% interval]; Δ = paired difference to W = {base_w} (± 2 SE)",
            "",
        ]
        headers = ["policy", "family"] + [f"W={w}" for w in workers] + [f"Δ W={w}" for w in workers if w != base_w]
        rows = []
        for policy in policies:
            for family in families:
                row = [policy, family]
                runs = {w: results.get((policy, family, budget, w), {}) for w in workers}
                for w in workers:
                    mean, half = mean_ci(list(runs[w].values()))
                    row.append(f"{mean:.3f} [{mean - half:.3f}, {mean + half:.3f}]")
                for w in workers:
                    if w == base_w:
                        continue
                    diff, se, _ = paired(runs[base_w], runs[w])
                    low = diff < -2 * se
                    if low and w >= 16:
                        losses[policy].append(f"{family} B={budget} W={w} ({diff:+.3f} ± {2 * se:.3f})")
                    row.append(f"{diff:+.3f} ± {2 * se:.3f}{' LOW' if low else ''}")
                rows.append(row)
        lines += table(headers, rows, markdown)
    return lines, losses


def clock_table(results_clock: dict, policies: list[str], budgets: list[int], workers: list[int], markdown: bool):
    """Virtual speed-up over W = 1, busy share and the deepest node's depth, per policy and budget, over families
    and seeds."""
    headers = ["policy", "budget"] + [f"W={w} speed-up / busy / depth" for w in workers]
    rows = []
    for policy in policies:
        for budget in budgets:
            row = [policy, str(budget)]
            base = results_clock.get((policy, budget, min(workers)), [])
            base_clock = float(np.mean([c for c, _, _ in base])) if base else float("nan")
            for w in workers:
                cells = results_clock.get((policy, budget, w), [])
                clock = float(np.mean([c for c, _, _ in cells])) if cells else float("nan")
                busy = float(np.sum([b for _, b, _ in cells]) / np.sum([w * c for c, _, _ in cells])) if cells else 0.0
                depth = float(np.mean([d for _, _, d in cells])) if cells else float("nan")
                row.append(f"{base_clock / clock:.1f}x / {100 * busy:.0f}% / {depth:.1f}")
            rows.append(row)
    title = "Virtual clock: speed-up over W = 1 (mean clock) / busy share (evaluation time / (W x clock)) / depth"
    return ["", title + " of the deepest node (mean)", ""] + (table(headers, rows, markdown))


def quality(args, command: str) -> int:
    timing = LogNormalTime(args.sigma, 1.0, args.fail_factor)
    tasks = [
        (p, f, b, w, s, timing)
        for b in sorted(args.budgets, reverse=True)
        for p in args.policies
        for f in args.families
        for w in args.workers
        for s in range(args.seeds)
    ]
    header("Quality at any worker count on simulated landscapes", command)
    print(
        f"  settings: policies {' '.join(args.policies)}; families {' '.join(args.families)}; budgets "
        f"{' '.join(map(str, args.budgets))}; W {' '.join(map(str, args.workers))}; {args.seeds} seeds; "
        f"evaluation time lognormal median 1, sigma {args.sigma:g}, fail factor {args.fail_factor:g}; "
        f"{args.jobs} processes; {len(tasks)} searches"
    )
    print(f"  machine: {machine()}", flush=True)
    t0 = time.perf_counter()
    results: dict[tuple, dict[int, float]] = {}
    clocks: dict[tuple, list[tuple[float, float, int]]] = {}
    errors: dict[str, str] = {}
    inexact = 0
    pool = multiprocessing.Pool(args.jobs) if args.jobs > 1 else None
    try:
        for run in pool.imap_unordered(run_one, tasks, chunksize=8) if pool else map(run_one, tasks):
            if run.error:
                errors.setdefault(run.policy, run.error)
                continue
            inexact += run.evaluations != run.budget
            results.setdefault((run.policy, run.family, run.budget, run.workers), {})[run.seed] = run.final_q
            clocks.setdefault((run.policy, run.budget, run.workers), []).append((run.clock, run.busy, run.depth))
        if pool:
            pool.close()
    finally:
        if pool:
            pool.terminate()
            pool.join()
    print(
        f"  {len(tasks)} searches in {time.perf_counter() - t0:.0f} s; searches that did not spend exactly the "
        f"budget (an early stop): {inexact}"
    )
    for policy, error in errors.items():
        print(f"  errors in {policy} (the first): {error}")
    lines, losses = quality_tables(results, args.policies, args.families, args.budgets, args.workers, args.markdown)
    lines += clock_table(clocks, args.policies, args.budgets, args.workers, args.markdown)
    lines += ["", "Verdict (W = 16 and 64 within 2 SE of W = 1 or better, paired per seed, every family and budget):"]
    for policy in args.policies:
        lines.append(f"  {policy}: " + ("holds" if not losses[policy] else "NOT met: " + "; ".join(losses[policy])))
    print("\n".join(lines))
    return 1 if errors else 0


# ----- real searches: binpack with evaluations padded by a sleep -----------------------------------
BUSY_WORKERS, BUSY_SLEEP, BUSY_BUDGET, BUSY_DEV = 64, 10.0, 320, 64
BUSY_GOAL = 0.95


def padded_agent(seconds: float) -> str:
    """Binpack's seed (first fit) that sleeps `seconds` at import: outside `priority`, which is all the offline
    mutator edits, so every child sleeps too (scripts/bench_sandbox.py pads it the same way)."""
    seed = (REPO / "agents_seed" / "binpack" / "agent.py").read_text()
    return seed.replace("import numpy as np\n", f"import time\n\nimport numpy as np\n\ntime.sleep({seconds!r})\n", 1)


def tiny_instances(path: Path, dev: int, holdout: int) -> Path:
    """Instances of 10 items each, so that the sleep is the evaluation (bench_sandbox's shape)."""
    import json

    rng = np.random.default_rng(0)
    data = {
        f"{split}{i}": {"capacity": 150, "items": rng.integers(20, 101, 10).tolist(), "split": split}
        for split, count in (("dev", dev), ("holdout", holdout))
        for i in range(count)
    }
    path.write_text(json.dumps(data))
    return path


def engine_search(options: list[str], run_dir: Path, timeout: float) -> tuple[Path, float]:
    """`python -m engine.search OPTIONS --run-dir RUN_DIR --quiet` as a user runs it: (its archive, wall s)."""
    import subprocess

    command = [sys.executable, "-m", "engine.search", *options, "--run-dir", str(run_dir), "--quiet"]
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True")
    t0 = time.perf_counter()
    out = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"{shlex.join(command[1:])} exited {out.returncode}: {last}")
    (run,) = [p for p in run_dir.iterdir() if (p / "archive.duckdb").is_file()]
    return run / "archive.duckdb", wall


def busy_share(archive: Path, workers: int) -> dict:
    """scripts/bench_sandbox.py's utilization of the dev phase (its reader and analysis)."""
    import bench_sandbox

    evals, events = bench_sandbox.read_archive(archive)
    return bench_sandbox.analyse(evals, events, workers)


def header(title: str, command: str, with_machine: bool = False) -> None:
    """The first lines of each mode's output: what, when, the command (and the machine, for real searches)."""
    print(f"{title} ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})")
    print(f"  command: {command}")
    if with_machine:
        print(f"  machine: {machine()}", flush=True)


def padded_agent_file(folder: Path, sleep: float) -> Path:
    """binpack's seed agent sleeping `sleep` s at import, written as folder/agent.py."""
    agent = folder / "agent.py"
    agent.write_text(padded_agent(sleep))
    return agent


def busy(args, command: str) -> int:
    import tempfile

    w, sleep, budget = args.busy_workers, args.sleep if args.sleep is not None else BUSY_SLEEP, args.busy_budget
    header("Busy share of a real search", command, with_machine=True)
    with tempfile.TemporaryDirectory(prefix="bench_workers_") as tmp:
        folder = Path(tmp)
        agent = padded_agent_file(folder, sleep)
        instances = tiny_instances(folder / "instances.json", BUSY_DEV, 4)
        options = [
            "--task", "binpack", "--workers", str(w), "--budget", str(budget), "--sandbox", args.sandbox,
            "--seed", "0", "--agent", str(agent), "--instances", str(instances),
        ]  # fmt: skip
        print(f"  search: python -m engine.search {shlex.join(options)} --run-dir <tmp> --quiet", flush=True)
        archive, wall = engine_search(options, folder / "runs", timeout=600)
        r = busy_share(archive, w)
    runtime = np.asarray(r["runtime"])
    gaps = np.asarray(r["gaps"]) if r["gaps"] else np.zeros(1)
    print(
        f"  {r['n']} dev evaluations ({r['ok']} ok) on {BUSY_DEV} tiny dev instances, the agent sleeping {sleep:g} s; "
        f"runtime median {np.median(runtime):.2f} s, max {runtime.max():.2f} s; search command {wall:.0f} s, "
        f"dev phase {r['span']:.1f} s; load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    print(
        f"  idle {r['idle']:.1f} of {w * r['span']:.0f} slot-seconds: between evaluations on a slot "
        f"{float(np.sum(r['gaps'])):.1f} s over {len(r['gaps'])} gaps (mean {1e3 * gaps.mean():.0f} ms, p90 "
        f"{1e3 * np.percentile(gaps, 90):.0f} ms, max {1e3 * gaps.max():.0f} ms); before a slot's first and after "
        f"its last evaluation {r['edges']:.1f} s"
    )

    def mean_ms(values) -> str:
        return f"{1e3 * float(np.mean(values)):.0f} ms" if len(values) else "-"

    print(
        f"  in a gap: finish -> result committed mean {mean_ms(r['to_commit'])}; commit -> next start mean "
        f"{mean_ms(r['after_plain'])} in {len(r['after_plain'])} gaps without an inline expansion, "
        f"{mean_ms(r['after_expand'])} in {len(r['after_expand'])} with one; {len(r['expansions'])} expansions, "
        f"mean {mean_ms(r['expansions'])} each (bench_sandbox's split)"
    )
    slots = [s for s in r["slots"] if s]
    first, last = min(s[0].start for s in slots), max(s[-1].finish for s in slots)
    barrier = sum(b.start - a.finish for s in slots for a, b in zip(s, s[1:]) if a.node == 0 and b.node != 0)
    slot_seconds = w * r["span"]
    print(
        "  idle, in % of the slot-seconds: waiting for the seed's last dev evaluation (the seed is evaluated on "
        f"every dev instance first) {100 * barrier / slot_seconds:.1f}%, other gaps between evaluations "
        f"{100 * (float(np.sum(r['gaps'])) - barrier) / slot_seconds:.1f}%, the first wave's launches "
        f"{100 * sum(s[0].start - first for s in slots) / slot_seconds:.1f}%, after a slot's last evaluation "
        f"(the budget is spent) {100 * sum(last - s[-1].finish for s in slots) / slot_seconds:.1f}%"
    )
    met = r["utilization"] >= BUSY_GOAL
    print(
        f"busy share {100 * r['utilization']:.1f}% (sum of dev evaluation runtimes / ({w} x {r['span']:.1f} s)); "
        f"goal >= {100 * BUSY_GOAL:.0f}%: {'met' if met else 'NOT met'}"
    )
    return 0


def binpack(args, command: str) -> int:
    """Real binpack searches with the default policy, evaluations padded by a sleep, per W and seed."""
    import tempfile
    from concurrent.futures import ThreadPoolExecutor

    import bench_tasks

    sleep = args.sleep if args.sleep is not None else 1.0
    header("Binpack with padded evaluations", command, with_machine=True)
    with tempfile.TemporaryDirectory(prefix="bench_workers_") as tmp:
        folder = Path(tmp)
        agent = padded_agent_file(folder, sleep)

        def one(w_seed: tuple[int, int]) -> tuple[int, int, dict, float, dict]:
            w, seed = w_seed
            options = ["--task", "binpack", "--workers", str(w), "--budget", str(args.binpack_budget)]
            options += ["--sandbox", args.sandbox, "--seed", str(seed), "--agent", str(agent)]
            archive, wall = engine_search(options, folder / f"runs-{w}-{seed}", timeout=3600)
            return w, seed, bench_tasks.read_run(archive, bench_tasks.TASKS["binpack"]), wall, busy_share(archive, w)

        print(
            f"  searches: python -m engine.search --task binpack --workers W --budget {args.binpack_budget} "
            f"--sandbox {args.sandbox} --seed S --agent <first fit sleeping {sleep:g} s at import> --run-dir <tmp> "
            f"--quiet, W in {args.binpack_workers}, S in 0..{args.seeds - 1}, {args.jobs} at a time",
            flush=True,
        )
        cells = [(w, s) for w in args.binpack_workers for s in range(args.seeds)]
        with ThreadPoolExecutor(max(args.jobs, 1)) as pool:
            done = list(pool.map(one, sorted(cells)))
    excess: dict[int, dict[int, float]] = {}
    for w, seed, figures, wall, r in sorted(done):
        value = figures["final"][1]
        excess.setdefault(w, {})[seed] = value
        print(
            f"  W={w} seed {seed}: final node {figures['final_node']} of {figures['nodes']}, holdout excess "
            f"{value:.3f}% (seed agent {figures['seed'][1]:.3f}%), busy {100 * r['utilization']:.0f}%, {wall:.0f} s"
        )
    base = min(excess)
    headers = ["W", "holdout excess, % [95% interval]", f"paired Δ to W={base} (± 2 SE)"]
    rows = []
    for w in sorted(excess):
        mean, half = mean_ci(list(excess[w].values()))
        diff, se, _ = paired(excess[base], excess[w])
        rows.append([str(w), f"{mean:.3f} [{mean - half:.3f}, {mean + half:.3f}]", f"{diff:+.3f} ± {2 * se:.3f}"])
    print("\n".join(["", *table(headers, rows, args.markdown)]))
    print("(lower is better: the final node's excess of bins over the L1 bound on the 16 holdout instances)")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--policies", nargs="+", default=list(POLICIES))
    parser.add_argument("--families", nargs="+", choices=list(FAMILIES), default=list(FAMILIES))
    parser.add_argument("--budgets", type=int, nargs="+", default=list(BUDGETS))
    parser.add_argument("--workers", type=int, nargs="+", default=list(WORKERS))
    parser.add_argument("--seeds", type=int, default=SEEDS, help=f"seeds per cell (default {SEEDS})")
    parser.add_argument("--sigma", type=float, default=SIGMA, help=f"lognormal sigma of durations ({SIGMA})")
    parser.add_argument("--fail-factor", type=float, default=1.0, help="a failed evaluation lasts F x as long")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes (default: cpu count)")
    parser.add_argument("--markdown", action="store_true", help="print the tables as markdown")
    parser.add_argument("--busy", action="store_true", help="the busy share of a real search (see the docstring)")
    parser.add_argument("--busy-workers", type=int, default=BUSY_WORKERS, help=f"--busy's workers ({BUSY_WORKERS})")
    parser.add_argument("--busy-budget", type=int, default=BUSY_BUDGET, help=f"--busy's budget ({BUSY_BUDGET})")
    parser.add_argument("--binpack", action="store_true", help="real binpack searches per W (see the docstring)")
    parser.add_argument("--binpack-workers", type=int, nargs="+", default=[1, 4, 16], help="--binpack's W")
    parser.add_argument("--binpack-budget", type=int, default=80, help="--binpack's budget (80)")
    parser.add_argument("--sleep", type=float, help="seconds each padded evaluation sleeps (--busy 10, --binpack 1)")
    parser.add_argument("--sandbox", default="process", help="the real searches' --sandbox (process)")
    args = parser.parse_args(argv)
    from search import POLICIES as KNOWN

    unknown = [p for p in args.policies if p not in KNOWN]
    if unknown or min(args.workers) < 1 or args.seeds < 2:
        parser.error(f"unknown policies {unknown}" if unknown else "--workers >= 1 and --seeds >= 2")
    command = "python scripts/bench_workers.py" + "".join(" " + shlex.quote(a) for a in argv)
    if args.busy:
        return busy(args, command)
    if args.binpack:
        return binpack(args, command)
    return quality(args, command)


if __name__ == "__main__":
    sys.exit(main())
