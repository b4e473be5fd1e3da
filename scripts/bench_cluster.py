"""How far one engine process scales: its own ceiling with instant evaluations, and Ray's cost per evaluation.

    python scripts/bench_cluster.py            # 1k, 10k, 100k nodes x 1000 evaluations; 40 sleep jobs per executor
    python scripts/bench_cluster.py --quick    # 1k and 10k nodes x 150 evaluations; 5 groups in c); 12 sleep jobs
    python scripts/bench_cluster.py --sizes 100000 --evaluations 3000 --skip-ray
    python scripts/bench_cluster.py --skip-ray   # a) and c) alone: no Ray, no Slurm (standalone, any machine)
    python scripts/bench_cluster.py --quick --slurm-local   # Slurm beside Ray, on a single-node Slurm started here

a) The engine's ceiling. The real loop, `engine.loop.scheduler.Scheduler(state,
   HGMPolicy(), OfflineMutator(), RunHandles(sandbox), SchedulerSettings(budget, W, commit_rows=...), rng)`,
   on a `RunState` whose tree
   is a synthetic one of n nodes (`scripts/bench_scheduler.py`'s `grow`, shape
   `mixed`: parents at random, 1 to 16 of 16 dev evaluations per valid node, so
   most nodes are open and nearly every decision is an evaluation) and whose
   DuckDB archive (a file in --dir) was bulk-filled with as many evaluation and
   event rows (`prefilled_archive` of the same script). The sandbox is an object
   whose `async run(job)` returns a ready `SandboxResult` at once; the task is
   binpack with its grader and scorer replaced by ones that return at once (a
   score drawn from the node's hidden quality as in bench_scheduler), so what is
   timed is the engine alone: decision (`TreeStats.view` + `HGMPolicy.decide`),
   job building and asyncio, grading stubs, the durable archive write, the
   tree's bookkeeping. Each tree size is run twice, side by side, each on a
   fresh tree and archive: 'each' (commit_rows=1: `Archive.add_evaluation` is
   one committed transaction per evaluation, the engine before group commit)
   and 'group' (the engine's group commit, archive/group_commit.py: at most
   --commit-rows evaluations or 20 ms per transaction). write = add_evaluation
   + the group's commits wherever they fire (+ an expansion's `add_node`). The
   loop runs N more evaluations (the budget is the tree's evaluations + N);
   evaluations/s = N / wall time of `Scheduler.run()`; 'x each' = the group
   row's rate over the each row's; rows/txn = evaluations per committed
   transaction. decision and write are summed by wrapping those calls; rest =
   wall - decision - write. Expansions (rare in this shape) are done inline by
   the offline mutator and are inside the wall time. Targets (issue 30): >= 1,000
   evaluations/s at 10k nodes and >= 800 at 100k with group commit; the script
   says whether they were met.

c) One group's write (printed after a): k = 8 and 64 evaluations (evaluation +
   event rows) committed into an archive prefilled with 160,000 rows (16,000 with --quick), four ways
   taking turns: one `add_evaluation` transaction each, `executemany` per
   table, one multi-row `INSERT ... VALUES (...), (...)` per table, and the
   engine's way (each column's values as one typed list, unnested: one INSERT
   per table); the median ms per evaluation of --group-rounds groups, wall and
   the process's CPU time.
   --skip-group-writes leaves it out.

b) Ray's and Slurm's per-evaluation overhead. N jobs (`SandboxJob` running `python -c
   "import time; time.sleep(0.2); open('answer.json','w').write('{}')"`, answer
   answer.json) go through (i) `make_sandbox("process")` and (ii)
   `RaySandbox("process", workers=2)` (a local Ray, started before timing; 2
   warm-up jobs first), and (iii) `SlurmSandbox("process", ...)` (each job a
   Slurm job through submitit; the cluster SLURM_CONF or /etc/slurm names when
   `sinfo` answers, or with --slurm-local a single-node one that
   scripts/slurm_local.py starts for the run and stops after it; 2 warm-up jobs
   first), 2 at a time (a semaphore) in each. wall per evaluation =
   2 x wall / N (each of the 2 slots runs N/2 jobs); overhead = that - 0.2 s.

Then workers kept busy by one engine for evaluations of T seconds: W = (T + o) / c,
where c = 1 / (evaluations/s of a) at that tree size) is what one evaluation costs
the engine process and o is the per-evaluation overhead of the executor from b)
(a worker is held T + o per evaluation, and W workers return W / (T + o)
results per second, which the engine can record while W / (T + o) <= 1 / c).
Wall-clock times on whatever else the machine is doing; its load average is printed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from archive.group_commit import AGE_S as GROUP_AGE_S  # noqa: E402
from archive.group_commit import ROWS as GROUP_ROWS  # noqa: E402

SLEEP_S = 0.2
SLEEP_COMMAND = "import time; time.sleep(0.2); open('answer.json','w').write('{}')"
EVAL_TIMES = (1.0, 10.0, 100.0)


# ----- a) the engine's ceiling -----------------------------------------------------
class InstantSandbox:
    """A sandbox whose job has already ended well: the engine's own cost is all that is left."""

    name = "instant"

    def __init__(self) -> None:
        from engine.sandbox import SandboxResult

        self.result = SandboxResult("ok", 0, b"[0]", "", "", 0.0)
        self.jobs = 0

    async def run(self, job):
        self.jobs += 1
        return self.result


def instant_task(syn, seed: int):
    """binpack (entry point, seed, limits, command as they are) whose grade and score return at once."""
    import numpy as np
    from bench_scheduler import score

    from tasks.base import Grade
    from tasks.binpack.task import BinPackTask

    class InstantTask(BinPackTask):
        def __init__(self) -> None:
            super().__init__()
            self.world = np.random.default_rng(seed + 7)
            self.current = 0  # the node whose result is being recorded (set around Scheduler._record)

        def sandbox_files(self, instance):
            return {"instance.json": b"{}"}

        def grade(self, instance, answer):
            return Grade(True, {"bins": 41}, "")

        def score(self, instance, metrics, reference):
            return score(syn.quality[min(self.current, len(syn.quality) - 1)], self.world)

    return InstantTask()


class Timed:
    """Wraps a callable and adds up the time spent in it. Timers made `within` another share its nesting: a call
    made inside a call of the other (a group's commit inside add_evaluation) is counted by the outer one only."""

    def __init__(self, fn, within: Timed | None = None) -> None:
        self.fn, self.seconds, self.calls, self.nonzero = fn, 0.0, 0, 0
        self._depth = within._depth if within is not None else [0]

    def __call__(self, *args, **kwargs):
        self.calls += 1
        if self._depth[0]:
            result = self.fn(*args, **kwargs)
        else:
            self._depth[0] += 1
            t0 = time.perf_counter()
            try:
                result = self.fn(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - t0
                self._depth[0] -= 1
        self.nonzero += bool(result)
        return result


class TimedPolicy:
    """The policy as the scheduler sees it (HGMPolicy is frozen: its method cannot be wrapped in place)."""

    name = "hgm"

    def __init__(self, decide: Timed) -> None:
        self.decide = decide


class SeedFiles(dict):
    """RunState._files for a synthetic tree: nodes not stored in full carry the seed's files."""

    def __init__(self, seed_files: dict[str, str]) -> None:
        super().__init__()
        self.seed_files = seed_files

    def __contains__(self, node) -> bool:
        return True

    def __missing__(self, node):
        return self.seed_files


def engine_ceiling(n: int, evaluations: int, workers: int, folder: Path, seed: int, commit_rows: int) -> dict:
    """One timed pass of the real loop on a fresh synthetic tree of n nodes and its prefilled archive;
    commit_rows 1: every evaluation its own transaction (the engine before group commit), else its group commit."""
    import numpy as np
    from bench_scheduler import grow, prefilled_archive

    from engine.loop.evaluation import RunHandles
    from engine.loop.scheduler import Scheduler, SchedulerSettings
    from engine.loop.state import RunState
    from engine.mutators import OfflineMutator
    from search import HGMPolicy
    from tasks.base import Instance

    clock = time.perf_counter
    t0 = clock()
    syn = grow(n, "mixed", seed)
    tree = syn.tree
    grown_s = clock() - t0
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        t0 = clock()
        archive = prefilled_archive(Path(tmp), tree.evaluations_done)
        prefill_s = clock() - t0
        task = instant_task(syn, seed)
        dev = [Instance(f"dev{i}", "dev", {}) for i in range(tree.n_instances)]
        state = RunState(archive, task, dev, [], tree)
        state._files = SeedFiles(task.seed_files())
        state.seed_metrics = {inst.id: {"bins": 41} for inst in dev}
        view = Timed(tree.view)
        decide = Timed(HGMPolicy().decide)
        tree.view = view
        policy = TimedPolicy(decide)

        write = Timed(archive.add_evaluation)
        node_write = Timed(archive.add_node, within=write)
        commit = Timed(
            archive.commit_group, within=write
        )  # group commit: the held-back rows' transactions, wherever they fire
        archive.add_evaluation, archive.add_node, archive.commit_group = write, node_write, commit
        sandbox = InstantSandbox()

        nodes_before, done_before = tree.n, tree.evaluations_done
        scheduler = Scheduler(
            state,
            policy,
            OfflineMutator(),
            RunHandles(sandbox),
            SchedulerSettings(budget=done_before + evaluations, workers=workers, commit_rows=commit_rows),
            np.random.default_rng(seed + 3),
        )
        record = scheduler._record

        def recorded(launch, outcome):  # the stub scorer draws from the quality of the node being recorded
            task.current = launch.node
            return record(launch, outcome)

        scheduler._record = recorded
        # one untimed decision first: the bounds of search.bounds are built at the first pruned draws
        t0 = clock()
        for pending in (-tree.n, -tree.n, 10 * tree.n):
            HGMPolicy().decide(tree.view(pending_expansions=pending), np.random.default_rng(seed + 9))
        build_s = clock() - t0
        view.seconds = view.calls = decide.seconds = decide.calls = 0
        t0, cpu0 = clock(), time.process_time()
        stop = asyncio.run(scheduler.run())
        wall, cpu = clock() - t0, time.process_time() - cpu0
        rows = archive.evaluations_started_after(datetime(2025, 1, 2))
        archive.close()
    done = tree.evaluations_done - done_before
    decision = view.seconds + decide.seconds
    writes = write.seconds + node_write.seconds + commit.seconds
    return {
        "nodes": n,
        "grown_s": grown_s,
        "prefill_s": prefill_s,
        "build_s": build_s,
        "stop": stop,
        "evaluations": done,
        "stored": rows,
        "expansions": tree.n - nodes_before,
        "decisions": decide.calls,
        "wall": wall,
        "rate": done / wall if wall else float("nan"),
        "decision_ms": 1e3 * decision / done,
        "write_ms": 1e3 * writes / done,
        "rest_ms": 1e3 * (wall - decision - writes) / done,
        "total_ms": 1e3 * wall / done,
        "cpu_ms": 1e3 * cpu / done,  # the process's CPU time (all its threads, DuckDB's too): load inflates it less
        "evaluations_before": done_before,
        "commit_rows": commit_rows,
        "transactions": commit.nonzero if commit_rows > 1 else done,  # the transactions evaluations went in
    }


def mode(r: dict) -> str:
    return "each" if r["commit_rows"] == 1 else "group"


def print_ceiling(results: list[dict]) -> None:
    head = (
        f"  {'nodes':>7} {'commit':>6} | {'evals/s':>8} {'x each':>6} | {'rows/txn':>8} | {'ms per evaluation:':>18} "
        f"{'decision':>8} {'write':>7} {'rest':>7} {'total':>7} | {'cpu ms':>6} {'evals/cpu-s':>11}"
    )
    print(head)
    print("  " + "-" * (len(head) - 2))
    each = {r["nodes"]: r["rate"] for r in results if r["commit_rows"] == 1}
    for r in results:
        ratio = r["rate"] / each[r["nodes"]] if each.get(r["nodes"]) else float("nan")
        per_txn = r["evaluations"] / r["transactions"] if r["transactions"] else float("nan")
        print(
            f"  {r['nodes']:>7} {mode(r):>6} | {r['rate']:8.0f} {ratio:6.2f} | {per_txn:8.1f} | {'':>18} "
            f"{r['decision_ms']:8.3f} {r['write_ms']:7.3f} {r['rest_ms']:7.3f} {r['total_ms']:7.3f} | "
            f"{r['cpu_ms']:6.3f} {1e3 / r['cpu_ms']:11.0f}"
        )
    print(
        "  decision = tree.view + HGMPolicy.decide; write = Archive.add_evaluation (+ add_node of expansions, + the "
        "group's commits wherever they fire), committed; rest = wall - both (job building, asyncio, grading stubs, "
        "tree bookkeeping, inline expansions' mutation); x each = evaluations/s over the same tree's 'each' row; "
        "cpu ms = the process's CPU time per evaluation (all threads), evals/cpu-s = its inverse: the rate a "
        "machine with a core to spare for this process and a disk whose sync costs nothing would give (a loaded "
        "machine inflates wall times, not these)"
    )


# ----- b) Ray's per-evaluation overhead ------------------------------------------------
def sleep_job():
    from engine.sandbox import SandboxJob, SandboxLimits

    return SandboxJob(
        files={},
        command=[sys.executable, "-c", SLEEP_COMMAND],
        answer_file="answer.json",
        limits=SandboxLimits(timeout_s=30.0),
    )


async def run_jobs(sandbox, jobs: int, concurrency: int) -> tuple[float, int]:
    gate = asyncio.Semaphore(concurrency)
    job = sleep_job()

    async def one():
        async with gate:
            return await sandbox.run(job)

    t0 = time.perf_counter()
    results = await asyncio.gather(*(one() for _ in range(jobs)))
    wall = time.perf_counter() - t0
    return wall, sum(1 for r in results if r.ok and r.answer == b"{}")


def executor_overhead(jobs: int, concurrency: int, folder: Path, slurm: str) -> dict:
    """slurm: 'skip', 'here' (the configured cluster if sinfo answers) or 'local' (start a single-node one)."""
    from engine.sandbox import make_sandbox
    from engine.sandbox.ray_executor import RaySandbox, ray_available

    out: dict = {}
    local = make_sandbox("process")
    asyncio.run(run_jobs(local, concurrency, concurrency))  # warm-up
    out["local"] = asyncio.run(run_jobs(local, jobs, concurrency))
    ok, why = ray_available()
    if not ok:
        out["ray_skipped"] = why
    else:
        t0 = time.perf_counter()
        ray_sandbox = RaySandbox("process", workers=concurrency)
        try:
            out["ray_start_s"] = time.perf_counter() - t0
            asyncio.run(run_jobs(ray_sandbox, concurrency, concurrency))  # warm-up: workers started, code shipped
            out["ray"] = asyncio.run(run_jobs(ray_sandbox, jobs, concurrency))
        finally:
            ray_sandbox.close()
    if slurm != "skip":
        slurm_overhead(out, jobs, concurrency, folder, start_local=slurm == "local")
    return out


def slurm_overhead(out: dict, jobs: int, concurrency: int, folder: Path, start_local: bool) -> None:
    """out['slurm'] = (wall, ok) of the sleep jobs as Slurm jobs, or out['slurm_skipped'] = why not."""
    import subprocess

    from engine.sandbox.slurm_executor import SlurmSandbox, slurm_available

    ok, why = slurm_available()
    if not ok:
        out["slurm_skipped"] = why
        return
    with tempfile.TemporaryDirectory(prefix="clade-bench-slurm-", dir=folder) as tmp:
        local = REPO / "scripts" / "slurm_local.py"
        if start_local:
            started = subprocess.run([sys.executable, str(local), "start", tmp], capture_output=True, text=True)
            if started.returncode != 0:
                out["slurm_skipped"] = started.stderr.strip()
                return
            os.environ["SLURM_CONF"] = str(Path(tmp) / "slurm.conf")
        try:
            sinfo = subprocess.run(["sinfo", "-h"], capture_output=True, text=True, timeout=20)
            if sinfo.returncode != 0:
                out["slurm_skipped"] = f"sinfo: {sinfo.stderr.strip()[:200]} (--slurm-local starts a local one)"
                return
            box = SlurmSandbox("process", folder=Path(tmp) / "jobs", time_limit="10")
            try:
                out["slurm_where"] = box.cluster_said()
                asyncio.run(run_jobs(box, concurrency, concurrency))  # warm-up
                out["slurm"] = asyncio.run(run_jobs(box, jobs, concurrency))
            finally:
                box.close()
        finally:
            if start_local:
                subprocess.run([sys.executable, str(local), "stop", tmp], check=False)
                os.environ.pop("SLURM_CONF", None)


# ----- c) one group's write --------------------------------------------------------------
def group_writes(
    folder: Path, evaluations: int, sizes: tuple[int, ...], rounds: int
) -> list[tuple[str, int, float, float]]:
    """ms per evaluation of each way to commit `size` evaluations (evaluation + event rows) into an archive
    prefilled with `evaluations` rows, the ways taking turns (load hits all alike): (way, size, median wall ms,
    median CPU ms of the process)."""
    import numpy as np
    from bench_scheduler import evaluation_record, prefilled_archive

    from archive import benchmarks
    from archive.group_commit import GroupCommit

    held = GroupCommit(rows=10**6, age_s=3600.0)  # the engine's buffer, kept across groups as the engine does
    ways = (
        ("one transaction per evaluation (add_evaluation)", None),
        ("executemany per table", benchmarks.group_executemany),
        ("multi-row INSERT ... VALUES per table", benchmarks.group_values),
        (
            "unnested lists, one INSERT per table (engine)",
            lambda archive, group: benchmarks.group_unnest(archive, group, held),
        ),
    )
    out = []
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        archives = [prefilled_archive(Path(tmp) / f"c{k}", evaluations) for k in range(len(ways))]
        node = 10**7  # ids apart from the prefill's
        for size in sizes:
            times: list[list[float]] = [[] for _ in ways]
            cpus: list[list[float]] = [[] for _ in ways]
            for _ in range(rounds):
                for k, (_, write) in enumerate(ways):
                    evs = [evaluation_record(node + i, 0, 0.5) for i in range(size)]
                    node += size
                    event = ("evaluate", node, {"t": node, "theta": 0.5})
                    t0, cpu0 = time.perf_counter(), time.process_time()
                    if write is None:
                        for ev in evs:
                            archives[k].add_evaluation(ev, event=event)
                    else:
                        write(archives[k], benchmarks.group_rows(archives[k], evs, event))
                    times[k].append((time.perf_counter() - t0) / size)
                    cpus[k].append((time.process_time() - cpu0) / size)
            out += [
                (name, size, 1e3 * float(np.median(t)), 1e3 * float(np.median(c)))
                for (name, _), t, c in zip(ways, times, cpus)
            ]
        for archive in archives:
            archive.close()
    return out


# ----- report ------------------------------------------------------------------------
def machine(folder: Path) -> list[str]:
    import duckdb
    import numpy as np
    from bench_scheduler import filesystem

    try:
        import ray

        ray_version = ray.__version__
    except ImportError:
        ray_version = "not installed"
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "?"
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return [
        f"machine: {platform.platform()}, nproc {os.cpu_count()} (usable {usable}), load average {load}",
        f"python {platform.python_version()}, numpy {np.__version__}, duckdb {duckdb.__version__}, ray {ray_version}",
        f"archive files in {folder}: {filesystem(folder)}",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1k and 10k nodes, 150 evaluations, 12 sleep jobs")
    parser.add_argument("--sizes", type=int, nargs="+", help="tree sizes (default 1000 10000 100000)")
    parser.add_argument("--evaluations", type=int, help="evaluations timed per tree size (default 1000)")
    parser.add_argument(
        "--engine-workers", type=int, default=8, help="the scheduler's workers in a) (evaluations in flight; default 8)"
    )
    parser.add_argument(
        "--commit-rows",
        type=int,
        default=GROUP_ROWS,
        help=f"the group commit's most evaluations per transaction in a) (default {GROUP_ROWS})",
    )
    parser.add_argument("--skip-group-writes", action="store_true", help="leave out c)")
    parser.add_argument("--group-rounds", type=int, help="groups written per way and size in c) (default 20)")
    parser.add_argument("--jobs", type=int, help="sleep jobs per executor in b) (default 40)")
    parser.add_argument("--concurrency", type=int, default=2, help="jobs at once in b) (default 2)")
    parser.add_argument("--skip-ray", action="store_true", help="leave out b)")
    parser.add_argument("--skip-slurm", action="store_true", help="leave Slurm out of b)")
    parser.add_argument(
        "--slurm-local", action="store_true", help="start a single-node Slurm for b) (scripts/slurm_local.py; root)"
    )
    parser.add_argument(
        "--dir",
        type=Path,
        default=Path(tempfile.gettempdir()),
        help="where the temporary archives go (default: the system temp dir)",
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    args.sizes = args.sizes or ([1000, 10000] if args.quick else [1000, 10000, 100000])
    args.evaluations = args.evaluations or (150 if args.quick else 1000)
    args.jobs = args.jobs or (12 if args.quick else 40)
    args.group_rounds = args.group_rounds or (5 if args.quick else 20)
    args.dir.mkdir(parents=True, exist_ok=True)
    print(
        "Clade cluster benchmark: one engine's ceiling with instant evaluations, and Ray's and Slurm's cost per "
        "evaluation"
    )
    for line in machine(args.dir):
        print("  " + line)
    print()
    group = args.commit_rows
    print(
        f"a) Engine ceiling: real Scheduler + HGMPolicy + DuckDB archive, instant sandbox and grader, "
        f"{args.engine_workers} workers, {args.evaluations} evaluations timed per tree (synthetic 'mixed' tree, "
        f"16 dev instances); each tree size run twice, side by side: 'each' = one committed transaction per "
        f"evaluation (the engine before group commit), 'group' = group commit (at most {group} evaluations or "
        f"{GROUP_AGE_S * 1e3:g} ms per transaction)"
    )
    results = []
    for n in args.sizes:
        for rows in (1, group):
            r = engine_ceiling(n, args.evaluations, args.engine_workers, args.dir, args.seed, rows)
            print(
                f"  [{n} nodes, {mode(r)}] tree grown in {r['grown_s']:.1f} s, archive prefilled with "
                f"{r['evaluations_before']} evaluation + event rows in {r['prefill_s']:.1f} s, bounds built in "
                f"{r['build_s'] * 1e3:.0f} ms; {r['evaluations']} evaluations ({r['stored']} rows stored) in "
                f"{r['transactions']} transactions, {r['expansions']} expansions, {r['decisions']} policy "
                f"decisions; stop: {r['stop']}",
                flush=True,
            )
            results.append(r)
    print_ceiling(results)
    targets = {10000: 1000, 100000: 800}
    for r in results:
        if r["commit_rows"] > 1 and r["nodes"] in targets:
            met = "met" if r["rate"] >= targets[r["nodes"]] else "NOT met"
            print(
                f"  target at {r['nodes']} nodes: >= {targets[r['nodes']]}/s with group commit: "
                f"{r['rate']:.0f}/s, {met}"
            )
    print()
    if args.skip_group_writes:
        print("c) skipped (--skip-group-writes)")
    else:
        prefill = 16 * (1000 if args.quick else 10000)  # --quick: a smaller archive, so the test stays short
        print(
            f"c) One group's write: ms per evaluation to commit a group of k evaluations (evaluation + event rows) "
            f"into an archive prefilled with {prefill} rows, each way in turn, median of {args.group_rounds} groups"
        )
        rows = group_writes(args.dir, prefill, (8, 64), args.group_rounds)
        print(f"  {'way':<48} | " + " | ".join(f"{'k=' + str(k) + ' wall, cpu':>17}" for k in (8, 64)))
        for name in dict.fromkeys(row[0] for row in rows):
            cells = " | ".join(f"{wall:8.3f} {cpu:8.3f}" for n, _, wall, cpu in rows if n == name)
            print(f"  {name:<48} | {cells}")
    print()
    overhead = {}
    if args.skip_ray:
        print("b) skipped (--skip-ray)")
    else:
        print(
            f"b) Executor overhead: {args.jobs} jobs sleeping {SLEEP_S} s (python -c ...), {args.concurrency} "
            f"at a time, after {args.concurrency} warm-up jobs; wall per evaluation = {args.concurrency} x wall / "
            f"jobs"
        )
        slurm = "skip" if args.skip_slurm else "local" if args.slurm_local else "here"
        b = executor_overhead(args.jobs, args.concurrency, args.dir, slurm)
        for name, label in (("local", "local process"), ("ray", "ray/process"), ("slurm", "slurm/process")):
            if name not in b:
                continue
            wall, good = b[name]
            per = args.concurrency * wall / args.jobs
            overhead[name] = per - SLEEP_S
            print(
                f"  {label:<14} wall {wall:6.2f} s, {good}/{args.jobs} ok, per evaluation {per * 1e3:7.1f} ms, "
                f"overhead {overhead[name] * 1e3:+7.1f} ms"
            )
        if "ray_skipped" in b:
            print(f"  ray skipped: {b['ray_skipped']}")
        else:
            print(f"  (local Ray started in {b['ray_start_s']:.1f} s, not counted)")
            ratio = (overhead["ray"] + SLEEP_S) / (overhead["local"] + SLEEP_S)
            print(
                f"  ray/local: wall per evaluation ratio {ratio:.2f}x, overhead ratio "
                f"{overhead['ray'] / overhead['local']:.2f}x"
                if overhead["local"] > 0
                else f"  ray/local: wall per evaluation ratio {ratio:.2f}x"
            )
        if "slurm_skipped" in b:
            print(f"  slurm skipped: {b['slurm_skipped']}")
        elif "slurm" in b:
            print(f"  (Slurm: {b['slurm_where']}; each evaluation one job through submitit)")
            ratio = (overhead["slurm"] + SLEEP_S) / (overhead["local"] + SLEEP_S)
            print(f"  slurm/local: wall per evaluation ratio {ratio:.2f}x")
    print()
    print(
        "Workers one engine keeps busy: W = (T + o) / c, c = 1 / (evaluations/s from a)) the engine's cost "
        "per evaluation, o = the executor's overhead per evaluation from b), T = evaluation time. Beyond W "
        "the engine is the bottleneck (it records at most 1 / c results per second)."
    )
    executors = [name for name in ("local", "ray", "slurm") if name in overhead] or ["none"]
    head = f"  {'nodes':>7} {'c (ms)':>7} | " + " | ".join(
        f"{name + ' T=' + f'{t:g} s':>14}" for name in executors for t in EVAL_TIMES
    )
    print(head)
    print("  " + "-" * (len(head) - 2))
    for r in results:
        if r["commit_rows"] == 1 and len(results) > 1:
            continue  # the engine as it is now: its group-commit rows
        c = r["total_ms"] / 1e3
        cells = [f"{(t + overhead.get(name, 0.0)) / c:14.0f}" for name in executors for t in EVAL_TIMES]
        print(f"  {r['nodes']:>7} {c * 1e3:7.3f} | " + " | ".join(cells))
    print("machine load at the end: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
