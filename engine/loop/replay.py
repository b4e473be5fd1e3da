"""`--replay`: a new run whose model calls are all answered from an earlier run's archive.

With several workers the original's decisions depended on which evaluation
returned first, so deciding again would ask other questions. The replay
therefore does not decide: `ReplayScheduler` walks the original's recorded
evaluations and expansions (engine.loop.replay_plan) and grows the same tree.
"""

from __future__ import annotations

import asyncio
import math
import sys

from archive import Archive
from engine.loop.breaker import CircuitBreaker
from engine.loop.expansion import ExpansionResult, store_child
from engine.loop.replay_plan import RecordedEvaluation, RecordedExpansion, read_plan, recorded_child, recorded_model
from engine.loop.scheduler import Launch, Scheduler
from engine.mutators import AsyncMutator, ExpansionFailed, Pinned
from search.decisions import Evaluate, Expand


class ReplaySource:
    """The new run's archive for every write and read, except that recorded answers come from the original.

    The LLM client looks answers up by request hash, then (replay only) by the
    caller's key (`Archive.llm_answer_for_key`: only an answer every recorded
    call under the key agrees on); a question the original never asked stops
    the replay (the client's replay_only rule). A resumed expansion's own
    lookup (`first_llm_answer_for_key`) stays on the new run's archive.
    """

    def __init__(self, own: Archive, original_path: str) -> None:
        self._own = own
        self._original = Archive.open(original_path, read_only=True)

    def llm_answer(self, request_hash: str):
        return self._original.llm_answer(request_hash)

    def llm_answer_for_key(self, key: str):
        return self._original.llm_answer_for_key(key)

    def __getattr__(self, name: str):
        return getattr(self._own, name)


def make_scheduler(config, *args, **kwargs) -> Scheduler:
    """The run's scheduler: for `--replay`, one that follows the original's recorded events."""
    if config.llm.replay:
        return ReplayScheduler(*args, original=config.llm.replay, **kwargs)
    return Scheduler(*args, **kwargs)


class ReplayScheduler(Scheduler):
    """Evaluations and expansions in the original's recorded order, on up to W workers.

    An evaluation starts as soon as a worker is free. An expansion waits until
    every evaluation recorded before it has finished (the tree then holds what
    the original's held), runs the recorded parent with the recorded key (the
    model's answers come from the original's archive), and must store the
    recorded child id and status, or the replay stops as diverged. The policy,
    the budget, the time limit and the circuit breaker are not consulted: the
    original's events say where it stopped. Children of a synchronous mutator
    (the offline one, whose output depends on a random state that only its own
    order of decisions reproduces) and failed children (they hold nothing new,
    and their calls may have failed) are copied from the original's archive
    instead of being made again. A resumed replay skips what its own archive
    already holds.
    """

    def __init__(self, *args, original: str, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.breaker = CircuitBreaker(max_failed_expansions=sys.maxsize, max_failing_s=math.inf)  # never trips
        self.early_stop = None  # the original's events say where it stopped, --patience and --target included
        self.original_path = original
        self._stored: ExpansionResult | None = None  # the last one stored, to check it against the record

    def _expanded(self, result: ExpansionResult) -> str | None:
        self._stored = result
        return super()._expanded(result)

    async def run(self) -> str:
        original = Archive.open(self.original_path, read_only=True)
        pending: dict[asyncio.Task, Launch] = {}
        try:
            try:
                plan = read_plan(original)
            except ValueError as exc:
                self.fatal = str(exc)
                return self.fatal
            for step in plan:
                if isinstance(step, RecordedEvaluation):
                    stop = await self._replay_evaluation(step, pending)
                else:  # a copied child needs no tree: only a mutator reads one
                    settled = None if self._copies(step) else await self._settle(pending, asyncio.ALL_COMPLETED)
                    stop = settled or await self._replay_expansion(step, original)
                if stop:
                    break
            stop = await self._settle(pending, asyncio.ALL_COMPLETED) or self.fatal
            return stop or f"replayed {len(plan)} recorded evaluations and expansions"
        finally:
            await self._abandon(pending)  # type: ignore[arg-type]  # dict is invariant: these are evaluations only
            original.close()

    async def _settle(self, pending: dict[asyncio.Task, Launch], until: str) -> str | None:
        """Record finished evaluations: the first to finish, or all of them."""
        if not pending:
            return None
        done, _ = await asyncio.wait(pending, return_when=until)
        stop = None
        for task in done:
            launch = pending.pop(task)
            lost = self._record(launch, task.result())
            if lost:  # not stored, so the tree can no longer be the original's
                self.fatal = self.fatal or f"the replay could not store node {launch.node}'s evaluation: {lost}"
                stop = self.fatal
        return stop

    async def _replay_evaluation(self, step: RecordedEvaluation, pending) -> str | None:
        tree = self.state.tree
        index = self.state.dev_index.get(step.instance)
        if index is None or step.node >= tree.n or not tree.valid[step.node]:
            self.fatal = (
                f"the replay diverged at event {step.seq}: node {step.node} on instance {step.instance} "
                "was evaluated in the original but cannot be here"
            )
            return self.fatal
        if tree.is_tried(step.node, index):
            return None  # a resumed replay: already stored
        while not self._free_workers:
            stop = await self._settle(pending, asyncio.FIRST_COMPLETED)
            if stop:
                return stop
        task, launch = self._launch(Evaluate(step.node, index, step.detail))
        pending[task] = launch
        if self.progress:
            self.progress.busy(self.workers - len(self._free_workers))
        return None

    def _copies(self, step: RecordedExpansion) -> bool:
        """Is this child copied from the original rather than made again by the mutator? A failed child
        holds nothing new (its parent's files and an error), and its calls may have failed: copied too."""
        return not (self.asynchronous and step.key) or step.status == "failed"

    async def _replay_expansion(self, step: RecordedExpansion, original: Archive) -> str | None:
        if step.child < self.state.tree.n:
            return None  # a resumed replay: already stored
        self._stored = None
        decision = Expand(step.parent, step.detail)
        if not self._copies(step):
            assert step.key is not None  # an expansion replayed rather than copied has its key (see _copies)
            pinned = Pinned(
                step.key,
                recorded_model(original, step.key),
                step.answer_format,
                step.novelty_below,
                step.recommendations,
                step.prompt,
            )
            task, launch = self._launch_expansion(decision, pinned)
            try:
                await asyncio.wait([task])
            finally:
                task.cancel()  # a no-op once done; on Ctrl-C the expansion must not outlive the run
            self._finish_expansion(launch, task)  # a stop other than fatal is the original's to record
            if self.fatal:
                return self.fatal
        else:
            try:
                outcome = recorded_child(original, step.child)
            except ValueError as exc:
                self.fatal = str(exc)
                return self.fatal
            if isinstance(outcome, ExpansionFailed):  # a failed child keeps what its prompt carried
                outcome.recommendations_version, outcome.prompt_id = step.recommendations, step.prompt
                if isinstance(self.mutator, AsyncMutator):  # and what came due when it was made is written
                    await self.mutator.write_due()
            self._expanded(store_child(self.state, self.mutator, step.parent, outcome, step.detail))
        got = self._stored
        if got is None or (got.node_id, got.status) != (step.child, step.status):
            said = f"node {got.node_id} came out {got.status}" if got else "no child was stored"
            self.fatal = (
                f"the replay diverged at event {step.seq}: {said}, where the original stored node "
                f"{step.child} ({step.status}) from parent {step.parent}"
            )
        return self.fatal
