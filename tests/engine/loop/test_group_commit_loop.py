"""The scheduler's group commit: a result never waits past the group's age for its commit, even while the
loop waits on slow evaluations, and the loop ends with everything committed."""

from __future__ import annotations

import asyncio

import numpy as np

from engine.loop.evaluation import RunHandles
from engine.loop.scheduler import Scheduler, SchedulerSettings
from engine.loop.state import RunState
from engine.mutators import OfflineMutator
from engine.sandbox import SandboxResult
from search import make_policy
from tests.engine.loop.instant_search import open_run


class OneSlowJob:
    """Jobs end at once, except the fourth, which waits 0.3 s and then counts the committed evaluations."""

    name = "one-slow"

    def __init__(self, archive) -> None:
        self.archive, self.calls, self.committed_meanwhile = archive, 0, -1

    async def run(self, job) -> SandboxResult:
        self.calls += 1
        if self.calls == 4:
            await asyncio.sleep(0.3)
            other = self.archive._db.cursor()  # another connection: committed rows only
            self.committed_meanwhile = other.execute("SELECT count(*) FROM evaluations").fetchone()[0]
            other.close()
        return SandboxResult("ok", 0, b"[0]", "", "", 0.0)


def test_results_are_committed_within_their_age_while_the_loop_waits(tmp_path):
    archive, task = open_run(tmp_path, 0)
    sandbox = OneSlowJob(archive)
    scheduler = Scheduler(
        RunState.rebuild(archive, task),
        make_policy("hgm"),
        OfflineMutator(),
        RunHandles(sandbox),  # type: ignore[arg-type]
        SchedulerSettings(budget=4, workers=2, commit_rows=64, commit_age_s=0.01),
        np.random.default_rng(0),
    )
    asyncio.run(scheduler.run())
    assert sandbox.committed_meanwhile == 3  # the other three, committed by the timer, not at the end
    other = archive._db.cursor()
    assert other.execute("SELECT count(*) FROM evaluations").fetchone()[0] == 4  # the run ends committed
    other.close()
    archive.close()
