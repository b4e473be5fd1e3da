"""A search at hundreds of evaluations a second, for the kill -9 tests: the real Scheduler, HGM policy, offline
mutator and DuckDB archive file, with a sandbox whose jobs have already ended and a binpack task graded at once.

    python -m tests.engine.loop.instant_search FOLDER BUDGET SEED

makes the run in FOLDER (archive.duckdb) the first time and resumes it after: its state rebuilt from the
archive alone (`RunState.rebuild`, as `--resume` does), the rest of the budget spent. It prints `started N`
(N: dev evaluations already stored) once the loop is about to run, and `done N RATE` at the end.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import numpy as np

from archive import Archive, NodeRecord
from archive.store import files_hash
from engine.loop.evaluation import RunHandles
from engine.loop.scheduler import Scheduler, SchedulerSettings
from engine.loop.state import RunState
from engine.mutators import OfflineMutator
from engine.sandbox import SandboxResult
from search import make_policy
from tasks.base import Grade, Instance
from tasks.binpack.task import BinPackTask

DEV = 16
WORKERS = 8


class InstantSandbox:
    """Every job has already ended well."""

    name = "instant"

    async def run(self, job) -> SandboxResult:
        return SandboxResult("ok", 0, b"[0]", "", "", 0.0)


class InstantTask(BinPackTask):
    """binpack whose grade is instant and whose score depends on the evaluation (a hash: no shared state)."""

    def sandbox_files(self, instance: Instance) -> dict[str, bytes]:
        return {"instance.json": b"{}"}

    def grade(self, instance: Instance, answer) -> Grade:
        return Grade(True, {"bins": 41}, "")

    def score(self, instance: Instance, metrics, reference) -> float:
        return float(np.random.default_rng().random())


def open_run(folder: Path, seed: int) -> tuple[Archive, InstantTask]:
    task = InstantTask()
    path = folder / "archive.duckdb"
    if path.exists():
        return Archive.open(path), task
    archive = Archive.create(path, "instant", {"budget": 0}, seed)
    archive.add_instances([(f"dev{i}", "dev", {}) for i in range(DEV)])
    files = task.seed_files()
    archive.add_node(NodeRecord.root(0, files_hash(files), "seed"), files, event=("start", 0, {}))
    return archive, task


def main(folder: str, budget: int, seed: int) -> None:
    archive, task = open_run(Path(folder), seed)
    state = RunState.rebuild(archive, task)
    scheduler = Scheduler(
        state,
        make_policy("hgm"),
        OfflineMutator(),
        RunHandles(InstantSandbox()),  # type: ignore[arg-type]
        SchedulerSettings(budget=budget, workers=WORKERS),
        np.random.default_rng([seed, archive.next_event_seq]),
    )
    before = state.dev_spent
    print(f"started {before}", flush=True)
    t0 = time.perf_counter()
    asyncio.run(scheduler.run())
    wall = time.perf_counter() - t0
    archive.close()
    print(f"done {state.dev_spent} {(state.dev_spent - before) / wall:.0f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
