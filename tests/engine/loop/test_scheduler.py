"""The scheduler with an asynchronous mutator: expansions overlap evaluations, budgets stop cleanly."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from engine.config import RunConfig
from engine.errors import StopRun
from engine.front.creating import create_run
from engine.loop.evaluation import RunHandles
from engine.loop.scheduler import Scheduler, SchedulerSettings
from engine.loop.state import RunState
from engine.mutators import AsyncMutator, OfflineMutator
from engine.sandbox import make_sandbox
from search import make_policy


class SlowAsyncMutator(AsyncMutator):
    """The offline mutator behind an await, as an LLM would be; records how many evaluations overlap it."""

    name = "slow-async"
    model = "test/none"

    def __init__(self, scheduler_ref: list, stop_after: int | None = None) -> None:
        self._offline = OfflineMutator()
        self.calls = 0
        self.overlap = 0
        self.scheduler_ref = scheduler_ref
        self.stop_after = stop_after

    async def propose_async(self, files, context, rng):
        self.calls += 1
        if self.stop_after is not None and self.calls > self.stop_after:
            raise StopRun("spend budget reached")
        # Look at the workers all through the "thinking", not only at its end: evaluations are short and
        # may all have finished by then.
        scheduler = self.scheduler_ref[0]
        for _ in range(30):
            await asyncio.sleep(0.01)
            self.overlap = max(self.overlap, scheduler.workers - len(scheduler._free_workers))
        return self._offline.propose(files, context, rng)


def make_state(tmp_path, instances_file):
    config = RunConfig.of(budget=24, workers=2, seed=0, run_dir=str(tmp_path / "runs"), instances=str(instances_file))
    archive, task, config = create_run(config)
    return RunState.rebuild(archive, task), archive


def run_scheduler(state, mutator, budget, workers=2):
    ref: list = []
    scheduler = Scheduler(
        state,
        make_policy("hgm"),
        mutator,
        RunHandles(make_sandbox("process")),
        SchedulerSettings(budget=budget, workers=workers, expansion_slots=1),
        np.random.default_rng(0),
    )
    ref.append(scheduler)
    mutator.scheduler_ref = ref
    return asyncio.run(scheduler.run())


@pytest.mark.slow
def test_expansions_run_while_evaluations_go_on(tmp_path, instances_file):
    state, archive = make_state(tmp_path, instances_file)
    mutator = SlowAsyncMutator([])
    try:
        stop = run_scheduler(state, mutator, budget=24)
        assert stop == "budget spent"
        assert archive.query("SELECT count(*) FROM evaluations WHERE split = 'dev'")[0][0] == 24
        assert mutator.calls >= 2
        assert mutator.overlap >= 1  # a worker was evaluating while the model was "thinking"
        assert archive.query("SELECT count(*) FROM nodes WHERE mutator = 'slow-async'")[0][0] == mutator.calls
    finally:
        archive.close()


def test_an_error_that_stops_the_run_lets_in_flight_work_finish(tmp_path, instances_file):
    state, archive = make_state(tmp_path, instances_file)
    mutator = SlowAsyncMutator([], stop_after=2)
    try:
        stop = run_scheduler(state, mutator, budget=200)
        assert stop == "spend budget reached"
        done = archive.query("SELECT count(*) FROM evaluations WHERE split = 'dev'")[0][0]
        assert done < 200
        assert archive.query("SELECT count(*) FROM nodes")[0][0] == 3  # the root and two children
        assert state.tree.in_flight == 0
    finally:
        archive.close()


def test_every_node_carries_its_code_size_live_and_after_a_rebuild(tmp_path, instances_file):
    from engine.loop.expansion import code_size

    state, archive = make_state(tmp_path, instances_file)
    try:
        run_scheduler(state, SlowAsyncMutator([]), budget=12)
        n = state.tree.n
        assert n >= 2
        sizes = [code_size(archive.node_files(node)) for node in range(n)]
        assert list(state.tree.feature[:n]) == sizes  # as OpenEvolve's grid reads them while the run goes on
        assert list(RunState.rebuild(archive, state.task).tree.feature[:n]) == sizes  # and on resume
        assert len(set(sizes)) > 1  # children differ from the seed in size: the feature carries information
    finally:
        archive.close()
