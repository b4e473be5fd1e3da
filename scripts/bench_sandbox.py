"""Per-evaluation overhead of each sandbox backend, and how busy the engine keeps 2 workers (issue 4).

    python scripts/bench_sandbox.py                     # 30 jobs per backend, one 60-evaluation search per backend
    python scripts/bench_sandbox.py --repeats 100 --skip-utilization
    python scripts/bench_sandbox.py --backends process --budget 120

Overhead. Per backend present here (`process`; `bwrap` when bubblewrap can make
its namespaces; `docker` when engine/sandbox/docker.py exists and a daemon
answers), one sandbox from `engine.sandbox.make_sandbox(name)`, reused, runs
`SandboxJob(files={"agent.py": b"x = 1\\n"}, command=[python, "-c", "pass"],
answer_file="answer.json")` through its public `run`, one job at a time, beside
the bare baseline `subprocess.run([python, "-c", "pass"])` (and, for scale
only, `python -I -S -c pass`: what site's .pth files cost). After 3 warm-up
jobs each, the N timed ones go round-robin (bare, process, bwrap, bare, ...)
so machine noise hits every side alike. Reported: median and p90 wall time,
the overhead median(backend) - median(bare), and ratio = median(backend) /
median(bare) against its goal (process under 1.3x, bwrap under 1.6x; docker
has none).

Utilization. A real search, `python -m engine.search --workers 2 --budget B
--sandbox <backend> --quiet --seed 0 --run-dir <tmp> --instances <tmp> --agent
<tmp>`, per backend present (process; bwrap and docker where they run): the agent is the binpack
seed (first fit) whose module sleeps 0.2 s at import, so every evaluation is
0.2 s plus an interpreter start, and the instances are tiny (8 dev, 2 holdout,
10 items each) so the sleep dominates. The offline mutator only edits the body
of `priority`, so children keep the sleep; the share of evaluations that really
slept (runtime >= 0.2 s) is printed. Then the run's archive is read (dev
evaluations only: the holdout and reference runs after the search are left
out): utilization = sum(finished_at - started_at) / (2 x (last finished_at -
first started_at)), goal at least 95%. started_at / finished_at are taken
around the sandbox call (engine/loop/evaluation.py), so everything else the engine
does (grading, the DuckDB write, decisions, inline expansions, launching) is
idle time of a slot. Slots are inferred by greedy interval assignment (an
evaluation goes to the free slot that was freed last); the mean gap between one
evaluation finishing and the next starting on the same slot is printed, split
into finish -> its result committed (the evaluate event's time) and commit ->
next start, with and without inline expansions (an expansion's own time is its
expand event's time minus the event before it).

Wall-clock times on whatever else the machine is doing; its load average is printed.
Exit status 0 whether or not a goal is met (this reports); 1 on errors.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import itertools
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from archive.store import Archive
from engine.sandbox import SandboxJob, make_sandbox

BACKENDS = ("process", "bwrap", "docker")
OVERHEAD_GOAL = {"process": 1.3, "bwrap": 1.6}  # ratio to a bare `python -c pass`, must stay under
UTILIZATION_GOAL = 0.95
WORKERS = 2
SLEEP_S = 0.2
WARMUP = 3
N_DEV, N_HOLDOUT, N_ITEMS = 8, 2, 10

SLEEPY_AGENT = f'''"""Benchmark agent (scripts/bench_sandbox.py): first fit, after {SLEEP_S} s of sleep at import."""
import time

import numpy as np

time.sleep({SLEEP_S})  # outside priority(): the offline mutator leaves it alone


def priority(item, bins):
    """Every feasible bin the same priority: first fit."""
    return np.zeros_like(bins)
'''


class BenchError(Exception):
    """Something failed that makes the measurement meaningless."""


def ms(values, q: float = 50) -> float:
    return float(np.percentile(values, q)) * 1e3 if len(values) else float("nan")


# ----- which backends -------------------------------------------------------------
def availability(name: str) -> tuple[bool, str]:
    """(usable here, why not)."""
    if name == "process":
        return True, ""
    if name == "bwrap":
        from engine.sandbox.bwrap import bwrap_available

        return bwrap_available()
    if name == "docker":
        if not (REPO / "engine" / "sandbox" / "docker.py").is_file():
            return False, "engine/sandbox/docker.py not present"
        try:
            from engine.sandbox import docker
        except ImportError as exc:
            return False, f"engine.sandbox.docker does not import ({exc})"
        if not hasattr(docker, "docker_available"):
            return False, "engine.sandbox.docker has no docker_available"
        # never build an image from a benchmark (minutes, inside the timed warm-up): a missing one is skipped
        params = inspect.signature(docker.docker_available).parameters
        options = {"build": False} if "build" in params else {}
        if "image" in params and hasattr(docker, "DEFAULT_IMAGE"):
            options["image"] = docker.DEFAULT_IMAGE
        return docker.docker_available(**options)
    return False, "unknown backend"


# ----- part 1: overhead per evaluation -----------------------------------------------
OVERHEAD_JOB = SandboxJob(
    files={"agent.py": b"x = 1\n"}, command=[sys.executable, "-c", "pass"], answer_file="answer.json"
)
BARE = [sys.executable, "-c", "pass"]
BARE_NO_SITE = [sys.executable, "-I", "-S", "-c", "pass"]  # for scale only: the start without site (.pth files)


async def _close(sandbox) -> None:
    """Let a backend that holds something (a long-lived supervisor, a container) let go of it."""
    for attr in ("aclose", "close", "shutdown"):
        fn = getattr(sandbox, attr, None)
        if callable(fn):
            result = fn()
            if inspect.isawaitable(result):
                await result
            return


def measure_overhead(names: list[str], repeats: int) -> dict[str, list[float]]:
    """Seconds per job for 'bare' and each backend, interleaved round-robin after WARMUP jobs each.

    One event loop (asyncio.Runner) serves every backend call, as the engine's does, so a backend may
    keep state on it between jobs; the bare baseline runs outside it."""
    order = ["bare", "bare -I -S", *names]
    clock = time.perf_counter
    times: dict[str, list[float]] = {name: [] for name in order}
    with asyncio.Runner() as runner:
        sandboxes = {name: make_sandbox(name) for name in names}

        def one(name: str) -> float:
            if name.startswith("bare"):
                t0 = clock()
                subprocess.run(BARE if name == "bare" else BARE_NO_SITE, check=True)
                return clock() - t0
            t0 = clock()
            result = runner.run(sandboxes[name].run(OVERHEAD_JOB))
            elapsed = clock() - t0
            if result.status != "ok":
                raise BenchError(
                    f"{name}: the `python -c pass` job ended {result.status} ({result.reason}); "
                    f"stderr: {result.stderr_tail.strip()[-300:]}"
                )
            return elapsed

        try:
            for _ in range(WARMUP):
                for name in order:
                    one(name)
            for _ in range(repeats):
                for name in order:
                    times[name].append(one(name))
        finally:
            for sandbox in sandboxes.values():
                runner.run(_close(sandbox))
    return times


def print_overhead(times: dict[str, list[float]]) -> list[str]:
    bare = ms(times["bare"])
    print(
        f"  {'bare':<8} median {bare:7.2f} ms, p90 {ms(times['bare'], 90):7.2f} ms  "
        "(subprocess.run([python, '-c', 'pass']))"
    )
    no_site = times.pop("bare -I -S")
    print(
        f"  {'':<8} for scale, not in any ratio: python -I -S -c pass median {ms(no_site):.2f} ms, so this "
        f"interpreter spends {bare - ms(no_site):.1f} ms of a bare start in site (.pth files)"
    )
    verdicts = []
    for name, values in times.items():
        if name == "bare":
            continue
        med = ms(values)
        ratio = med / bare
        goal = OVERHEAD_GOAL.get(name)
        if goal is None:
            judged = "no goal set"
            verdicts.append(f"{name} {ratio:.2f}x (no goal)")
        else:
            met = ratio < goal
            judged = f"goal < {goal:.1f}x: {'met' if met else 'NOT met'}"
            verdicts.append(f"{name} {ratio:.2f}x (goal < {goal:.1f}x, {'met' if met else 'not met'})")
        print(
            f"  {name:<8} median {med:7.2f} ms, p90 {ms(values, 90):7.2f} ms, overhead {med - bare:+7.2f} ms, "
            f"ratio {ratio:.2f}x; {judged}"
        )
    return verdicts


# ----- part 2: worker utilization in a real search ---------------------------------------
def write_inputs(folder: Path) -> tuple[Path, Path]:
    """The sleepy agent and a tiny instances file (the shape of tests/conftest.py small_instances)."""
    agent = folder / "agent.py"
    agent.write_text(SLEEPY_AGENT)
    rng = np.random.default_rng(0)
    data = {}
    for split, count in (("dev", N_DEV), ("holdout", N_HOLDOUT)):
        for i in range(count):
            data[f"{split}{i}"] = {"capacity": 150, "items": rng.integers(20, 101, N_ITEMS).tolist(), "split": split}
    instances = folder / "instances.json"
    instances.write_text(json.dumps(data))
    return agent, instances


def search_command(backend: str, budget: int, run_dir: Path, instances: Path, agent: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "engine.search",
        "--workers",
        str(WORKERS),
        "--budget",
        str(budget),
        "--sandbox",
        backend,
        "--quiet",
        "--seed",
        "0",
        "--run-dir",
        str(run_dir),
        "--instances",
        str(instances),
        "--agent",
        str(agent),
    ]


def run_search(backend: str, budget: int, folder: Path, agent: Path, instances: Path) -> tuple[Path, float]:
    """Run the search as a user does; (its archive, wall seconds of the whole command)."""
    run_dir = folder / f"runs-{backend}"
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])), COLUMNS="200"
    )
    t0 = time.perf_counter()
    out = subprocess.run(
        search_command(backend, budget, run_dir, instances, agent),
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise BenchError(f"the {backend} search exited {out.returncode}:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    runs = [p for p in run_dir.iterdir() if (p / "archive.duckdb").is_file()]
    if len(runs) != 1:
        raise BenchError(f"expected one run folder in {run_dir}, found {len(runs)}")
    return runs[0] / "archive.duckdb", wall


@dataclass
class Eval:
    node: int
    instance: str
    start: float  # seconds from the first dev start
    finish: float
    runtime: float | None
    status: str
    worker: str | None
    committed: float | None  # its evaluate event's time


def read_archive(path: Path) -> tuple[list[Eval], list[tuple[float, str]]]:
    """Dev evaluations in start order, and events (time, kind) in sequence order."""
    with Archive.open(path, read_only=True) as archive:
        timed = [e for e in archive.evaluations("dev") if e.started_at is not None and e.finished_at is not None]
        rows = [
            (e.node_id, e.instance_id, e.started_at, e.finished_at, e.runtime_s, e.status, e.worker)
            for e in sorted(timed, key=lambda e: (e.started_at, e.finished_at))
        ]
        events = archive.timed_events()
    if not rows:
        raise BenchError(f"{path} holds no dev evaluations")
    t0 = min(r[2] for r in rows)

    def sec(t) -> float:
        return (t - t0).total_seconds()

    commit = {}
    for at, kind, node, detail in events:
        if kind == "evaluate":
            instance = json.loads(detail or "{}").get("instance")
            commit.setdefault((node, instance), sec(at))
    evals = [
        Eval(node, inst, sec(s), sec(f), rt, status, worker, commit.get((node, inst)))
        for node, inst, s, f, rt, status, worker in rows
    ]
    return evals, [(sec(at), kind) for at, kind, _, _ in events]


def greedy_slots(evals: list[Eval], workers: int) -> list[list[Eval]]:
    """Evaluations per slot: each (in start order) to the free slot freed last (an unused slot if none was)."""
    slots: list[list[Eval]] = [[] for _ in range(workers)]
    for ev in evals:
        free = [k for k, s in enumerate(slots) if not s or s[-1].finish <= ev.start]
        if free:
            used = [k for k in free if slots[k]]
            k = max(used, key=lambda k: slots[k][-1].finish) if used else free[0]
        else:  # more overlap than workers (clock skew): the slot freed first
            k = min(range(workers), key=lambda k: slots[k][-1].finish)
        slots[k].append(ev)
    return slots


def gaps_of(slots: list[list[Eval]]) -> list[tuple[Eval, Eval]]:
    return [(a, b) for slot in slots for a, b in itertools.pairwise(slot)]


def analyse(evals: list[Eval], events: list[tuple[float, str]], workers: int) -> dict:
    first = min(e.start for e in evals)
    last = max(e.finish for e in evals)
    span = last - first
    busy = sum(e.finish - e.start for e in evals)
    slots = greedy_slots(evals, workers)
    pairs = gaps_of(slots)
    gaps = [b.start - a.finish for a, b in pairs]
    by_column: dict[str, list[Eval]] = {}
    for e in evals:
        by_column.setdefault(e.worker or "?", []).append(e)
    column_gaps = [
        b.start - a.finish for a, b in gaps_of([sorted(v, key=lambda e: e.start) for v in by_column.values()])
    ]
    # an expansion's own time: its event's time minus the previous event's (the loop runs it inline, no await)
    expansions = [(at, at - events[i - 1][0]) for i, (at, kind) in enumerate(events) if kind == "expand" and i]
    to_commit, after_plain, after_expand, expansions_in_gaps = [], [], [], set()
    for a, b in pairs:
        if a.committed is not None:
            to_commit.append(a.committed - a.finish)
        inside = [k for k, (at, _) in enumerate(expansions) if a.finish < at <= b.start]
        rest = b.start - (a.committed if a.committed is not None else a.finish)
        (after_expand if inside else after_plain).append(rest)
        expansions_in_gaps.update(inside)  # one expansion can fall in both slots' gaps (both idle)
    edges = sum(s[0].start - first for s in slots if s) + sum(last - s[-1].finish for s in slots if s)
    edges += sum(span for s in slots if not s)
    largest = max(pairs, key=lambda p: p[1].start - p[0].finish) if pairs else None
    return {
        "n": len(evals),
        "ok": sum(e.status == "ok" for e in evals),
        "slept": sum((e.runtime or 0.0) >= SLEEP_S for e in evals),
        "runtime": [e.runtime for e in evals if e.runtime is not None],
        "span": span,
        "busy": busy,
        "utilization": busy / (workers * span) if span > 0 else float("nan"),
        "idle": workers * span - busy,
        "gaps": gaps,
        "column_gaps": column_gaps,
        "edges": edges,
        "to_commit": to_commit,
        "after_plain": after_plain,
        "after_expand": after_expand,
        "expansions": [d for _, d in expansions],
        "expansions_in_gaps": expansions_in_gaps,
        "largest": largest,
        "slots": slots,
    }


def print_utilization(backend: str, wall: float, events: list[tuple[float, str]], r: dict) -> str:
    def m(values) -> str:  # mean, in ms
        return f"{1e3 * float(np.mean(values)):.1f}" if values else "-"

    runtime = r["runtime"]
    print(
        f"  [{backend}] search command took {wall:.1f} s; dev phase {r['span']:.2f} s: {r['n']} dev evaluations "
        f"({r['ok']} ok), {r['slept']}/{r['n']} ({100 * r['slept'] / r['n']:.0f}%) slept (runtime >= {SLEEP_S} s), "
        f"runtime median {ms(runtime):.0f} ms, p90 {ms(runtime, 90):.0f} ms; "
        f"{sum(1 for _, k in events if k == 'expand')} expansions"
    )
    gaps = r["gaps"]
    print(
        f"  [{backend}] idle {r['idle']:.3f} of {WORKERS * r['span']:.2f} slot-seconds: between evaluations on a "
        f"slot {sum(gaps):.3f} s over {len(gaps)} gaps (mean {m(gaps)} ms, median {ms(gaps):.1f}, "
        f"p90 {ms(gaps, 90):.1f}, max {max(gaps) * 1e3 if gaps else 0:.1f}; by the archive's worker column: mean "
        f"{m(r['column_gaps'])} ms); before a slot's first / after its last evaluation {r['edges']:.3f} s "
        f"(the last evaluation runs alone once the budget is spent)"
    )
    largest = r["largest"]
    note = ""
    if largest is not None:
        a, b = largest
        what = (
            "the seed's last instance -> first child evaluation"
            if a.node == 0 and b.node != 0
            else f"node {a.node} {a.instance} -> node {b.node} {b.instance}"
        )
        note = f"; largest gap {1e3 * (b.start - a.finish):.1f} ms at {b.start:.2f} s ({what})"
    with_expansions = (
        f"{m(r['after_expand'])} ms in {len(r['after_expand'])} with inline expansions "
        f"(holding {len(r['expansions_in_gaps'])} of the {len(r['expansions'])} expansions)"
        if r["after_expand"]
        else "none with an expansion"
    )
    one_expansion = f"; an expansion takes mean {m(r['expansions'])} ms" if r["expansions"] else ""
    print(
        f"  [{backend}] in a gap: finish -> its result committed (wake-up, grading, DuckDB write) mean "
        f"{m(r['to_commit'])} ms; commit -> next start on the slot: mean {m(r['after_plain'])} ms in "
        f"{len(r['after_plain'])} gaps without an expansion, {with_expansions}{one_expansion}{note}"
    )
    met = r["utilization"] >= UTILIZATION_GOAL
    print(
        f"  [{backend}] utilization {100 * r['utilization']:.1f}% (busy {r['busy']:.2f} s / ({WORKERS} x "
        f"{r['span']:.2f} s)); goal >= {100 * UTILIZATION_GOAL:.0f}%: {'met' if met else 'NOT met'}; "
        f"mean gap on a slot {m(gaps)} ms"
    )
    return (
        f"{backend} utilization {100 * r['utilization']:.1f}% (goal >= {100 * UTILIZATION_GOAL:.0f}%, "
        f"{'met' if met else 'not met'})"
    )


# ----- main --------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=30, help="timed jobs per backend and bare (default 30)")
    parser.add_argument(
        "--budget", type=int, default=60, help="dev evaluations of each utilization search (default 60)"
    )
    parser.add_argument("--skip-utilization", action="store_true", help="only the overhead part")
    parser.add_argument(
        "--backends",
        default=",".join(BACKENDS),
        help=f"comma-separated, of {', '.join(BACKENDS)} (default: all; absent ones are skipped)",
    )
    args = parser.parse_args(argv)
    wanted = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = [b for b in wanted if b not in BACKENDS]
    if unknown or not wanted:
        parser.error(f"--backends: unknown {', '.join(unknown) or '(none given)'}; choose from {', '.join(BACKENDS)}")
    if args.repeats < 1 or args.budget < 1:
        parser.error("--repeats and --budget must be at least 1")

    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        "Clade sandbox benchmark: per-evaluation overhead of each backend against a bare `python -c pass`, and "
        f"worker utilization of a real search with {WORKERS} workers on {SLEEP_S} s evaluations"
    )
    print(
        f"  machine: {platform.platform()}, os.cpu_count() {os.cpu_count()}, load average {load}; "
        f"python {platform.python_version()} ({sys.executable})"
    )
    present = []
    for name in wanted:
        ok, why = availability(name)
        if ok:
            present.append(name)
        else:
            print(f"  {name}: skipped ({why})")
    verdicts = []
    try:
        print()
        print(
            f"Overhead per evaluation: {args.repeats} jobs each, one at a time, round-robin "
            f"(bare, bare -I -S, {', '.join(present)}) after {WARMUP} warm-up jobs each; backend job = "
            "make_sandbox(name).run(SandboxJob(files={'agent.py': b'x = 1\\n'}, command=[python, '-c', 'pass'], "
            "answer_file='answer.json')), one sandbox per backend, reused; wall time per call"
        )
        times = measure_overhead(present, args.repeats)
        verdicts += print_overhead(times)
        if not args.skip_utilization:
            searched = list(present)  # docker too, where its image is there (availability never builds one)
            print()
            print(
                f"Worker utilization: one search per backend ({', '.join(searched)}), command: "
                + " ".join(
                    search_command(
                        "<backend>",
                        args.budget,
                        Path("<tmp>/runs"),
                        Path("<tmp>/instances.json"),
                        Path("<tmp>/agent.py"),
                    )
                ).replace(sys.executable, "python")
            )
            print(
                f"  agent: binpack first fit sleeping {SLEEP_S} s at import; instances: {N_DEV} dev + {N_HOLDOUT} "
                f"holdout, {N_ITEMS} items each; utilization over dev evaluations only = sum(finished_at - "
                f"started_at) / ({WORKERS} x (last finished_at - first started_at)); slots by greedy interval "
                "assignment"
            )
            with tempfile.TemporaryDirectory(prefix="clade-bench-sandbox-") as tmp:
                folder = Path(tmp)
                agent, instances = write_inputs(folder)
                for backend in searched:
                    archive, wall = run_search(backend, args.budget, folder, agent, instances)
                    evals, events = read_archive(archive)
                    verdicts.append(print_utilization(backend, wall, events, analyse(evals, events, WORKERS)))
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print()
    print("summary: " + "; ".join(verdicts))
    print("machine load at the end: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
