"""The asynchronous search loop: keep W evaluations in flight, decide, record.

HGM is asynchronous, and so is this loop: as soon as one evaluation returns,
its result is committed and the next decision is taken, so no worker waits on
another's slow instance (DGM's synchronous generations do). Decisions come
from the policy, except at the start: the seed (root) is evaluated on every
dev instance first, since every child's score is measured against it.

Expansions by a synchronous mutator (the offline one) happen inline. An
asynchronous mutator (an LLM) runs up to `expansion_slots` expansions while
evaluations go on; the policy sees them as pending and is told when no slot
is free, so workers keep evaluating instead of waiting on a model. With one
worker, expansions are awaited inline too, so that a seed fixes the tree.
A mutator that raises `StopRun` (engine.errors: a budget reached; its kind
`FatalStop`, a bad API key) stops new work; what is in flight finishes and is
stored. So does an evaluation whose agent met the run's LLM budget (or a
refused key) through the gateway: that evaluation is not its result, so it is
not stored (a resumed run with more budget runs it again).

Early stopping (engine/loop/early_stop.py: `--patience`, `--target`) stops
new work the same way as the time limit, once an evaluation shows the best
full-dev mean has stalled or reached the target; an `early_stop` event says why.

Three more stops, each said in one line. The time limit and the circuit
breaker (engine/loop/breaker.py: failed expansions in a row, or model calls failing
for too long) cancel the expansions in flight (an answer already paid is in
`llm_calls`, and a resumed run adopts it) and let the evaluations in flight
finish. A seed that fails every evaluation of its first stage (the staged
policy's first batch, else every dev instance) stops the run before any
expansion: nothing can be measured against it.

A task of one dev instance gets one noise probe: the seed runs on it once
more (stored with `repeat` 1; it counts in the budget), and the two scores say
how much one evaluation counts (search.evidence) in every decision after it.
When they differ, the end of the budget re-measures the best candidates
(search.remeasure) for the final choice.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.errors import FatalStop, StopRun
from engine.loop.breaker import CircuitBreaker
from engine.loop.early_stop import EarlyStop
from engine.loop.evaluation import Outcome, RunHandles
from engine.loop.expansion import ExpansionResult, expand, mutation_context, store_child
from engine.loop.state import RunState
from engine.loop.utility import scored
from engine.mutators import NOT_PINNED, AsyncMutator, ExpansionFailed, Mutator, Pinned, SyncMutator
from search.decisions import Evaluate, Expand
from search.remeasure import pick_repeat

MAX_INVALID_STREAK = 200
TIME_LIMIT = "time limit reached"
POLL_S = 2.0  # the loop looks at the clock this often while waiting (a hung model call sends no event)


@dataclass(frozen=True)
class SchedulerSettings:
    """How much the loop may do, and how fast."""

    budget: int  # dev evaluations, the noise probe and re-measures included
    workers: int  # evaluations in flight at once
    deadline: float | None = None  # the `time.monotonic()` at which the run stops (--time-limit); None: none
    expansion_slots: int = 1  # an asynchronous mutator's expansions at once (--llm-concurrency)
    seed_screen: int | None = None  # the seed's evaluations that must not all fail (None: every dev instance)
    early_stop: EarlyStop | None = None  # --patience and --target, followed from the archive's history on


@dataclass(frozen=True)
class Launch:
    node: int
    instance: int
    worker: int
    detail: dict


@dataclass(frozen=True)
class ExpansionLaunch:
    parent: int
    detail: dict


class Scheduler:
    def __init__(
        self,
        state: RunState,
        policy: Any,
        mutator: Mutator,
        handles: RunHandles,
        settings: SchedulerSettings,
        rng: np.random.Generator,
        *,
        progress: Any = None,
        breaker: CircuitBreaker | None = None,
    ) -> None:
        """`policy`: a search policy (search.decisions: `decide(view, rng)`); `progress`: the front's display
        (engine.front.progress.SearchProgress), None for none."""
        if not isinstance(mutator, (SyncMutator, AsyncMutator)):
            raise TypeError(f"{type(mutator).__name__} is neither a SyncMutator nor an AsyncMutator")
        self.state = state
        self.policy = policy
        self.mutator = mutator
        self.handles = handles
        self.budget = settings.budget
        self.workers = settings.workers
        self.rng = rng
        self.deadline = settings.deadline
        self.progress = progress
        self._free_workers = list(range(settings.workers))
        self._invalid_streak = 0
        self.asynchronous = isinstance(mutator, AsyncMutator)
        self.expansion_slots = max(1, settings.expansion_slots)
        self._expanding = 0
        self.fatal: str | None = None  # a stop the user must act on (bad key, unknown model, breaker)
        self.resumable = True  # False when resuming cannot help (a seed that fails everything)
        self.breaker = breaker or CircuitBreaker()
        self.seed_screen = settings.seed_screen or state.tree.n_instances
        self._seed_failures: list[tuple[str, str]] = []  # (instance, why) of the seed's failed dev evaluations
        self._seed_done = 0
        self._repeating: dict[int, int] = {}  # node -> repeats in flight (noise probe, re-measures)
        self.early_stop = settings.early_stop if settings.early_stop and settings.early_stop.active else None
        self._stopped_early: str | None = None  # the early stop's line, once its event is recorded
        self._load_seed_record()

    def _load_seed_record(self) -> None:
        """The seed's dev evaluations so far (a resumed run): how many, and which failed with what."""
        rows = self.state.archive.seed_dev_record()
        self._seed_done = len(rows)
        self._seed_failures = [
            (i, f"{status}: {feedback}" if feedback else status) for i, status, feedback in rows if status != "ok"
        ]

    def _seed_verdict(self) -> str | None:
        """Why the run cannot go on when the seed failed every evaluation of its first stage, else None."""
        done = self._seed_done
        if done < min(self.seed_screen, self.state.tree.n_instances) or len(self._seed_failures) < done:
            return None
        instance, why = self._seed_failures[0]
        self.resumable = False
        which = "its first dev evaluation" if done == 1 else f"all {done} of its first dev evaluations"
        return f"the seed (node 0) failed {which}, so no child can be measured against it; on {instance}: {why}"

    def model_call(self, ok: bool, error: str | None) -> None:
        """Every model call, as its llm_calls row is written (the client's observer)."""
        self.breaker.call(ok, error)
        if self.progress:
            self.progress.model_call(ok)

    def _breaker_stop(self) -> str | None:
        tripped = self.breaker.tripped()
        if tripped and self.fatal is None:  # the first reason stands (a second expansion may finish with it)
            self.fatal = f"stopped: {tripped}"
        return self.fatal if tripped else None

    def _early_verdict(self) -> str | None:
        """--patience or --target ends the run now: its line (the event `early_stop` recorded the first time)."""
        if self.early_stop is None:
            return None
        if self._stopped_early is None:
            found = self.early_stop.verdict()
            if found is None:
                return None
            line, detail = found
            self.state.archive.add_event("early_stop", detail["best_node"], {**detail, "reason": line})
            self._stopped_early = line
        return self._stopped_early

    def _lasting_stop(self) -> str | None:
        """The time limit or the breaker, checked between events."""
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return TIME_LIMIT
        return self._breaker_stop()

    def _wake_in(self) -> float:
        """Seconds until the loop must look at the time limit and the breaker's clock again."""
        waits = [
            w
            for w in (None if self.deadline is None else self.deadline - time.monotonic(), self.breaker.seconds_left())
            if w is not None
        ]
        return max(min(waits + [POLL_S]), 0.01)

    # ----- decisions --------------------------------------------------------
    def _next_decision(self) -> Expand | Evaluate | None:
        tree = self.state.tree
        if tree.n_instances and tree.valid[0] and not tree.n_evals[0] == tree.n_instances:
            if tree.open_mask[0]:  # the seed first: every child is scored against it
                untried = tree.untried(0)
                return Evaluate(0, untried[0], {"rule": "seed first"})
            if tree.in_flight:
                return None
        if self.state.wants_noise_probe() and not self._repeating:
            return self._repeat(0, "noise probe")
        if self.state.remeasure_due(self.budget, tree.in_flight + self._repeats_in_flight()):
            node = pick_repeat(self.state.runs, self.state.noise_var or 0.0, self._repeating)
            if node is not None:
                return self._repeat(node, "re-measure")
        view = tree.view(
            pending_expansions=self._expanding,
            budget=self.budget,
            can_expand=self._expanding < self.expansion_slots,
            evidence=self.state.evidence(),
        )
        return self.policy.decide(view, self.rng)

    def _repeat(self, node: int, rule: str) -> Evaluate:
        """One more run of a measured node on the one dev instance (search.remeasure): `repeat` is its run number."""
        number = len(self.state.runs.get(node, ())) + self._repeating.get(node, 0)
        return Evaluate(node, 0, {"rule": rule, "repeat": number})

    def _repeats_in_flight(self) -> int:
        return sum(self._repeating.values())

    def _spendable(self) -> bool:
        tree = self.state.tree
        return self.state.dev_spent + tree.in_flight + self._repeats_in_flight() < self.budget

    def _stop(self, stop: StopRun) -> str:
        """Why the run stops taking new work; a `FatalStop` is also the run's fatal one (the user must act)."""
        if isinstance(stop, FatalStop):
            self.fatal = str(stop)
        return str(stop)

    def _expand(self, decision: Expand) -> str | None:
        """A synchronous mutator's expansion, made and stored inline."""
        if not isinstance(self.mutator, SyncMutator):
            raise TypeError(f"{self.mutator.name}: an asynchronous mutator's expansions are launched")
        try:
            result = expand(self.state, self.mutator, decision.node_id, self.rng, decision.detail)
        except StopRun as stop:
            return self._stop(stop)
        return self._expanded(result)

    def _launch_expansion(self, decision: Expand, pinned: Pinned = NOT_PINNED) -> tuple[asyncio.Task, ExpansionLaunch]:
        """Start an asynchronous mutation; the child is stored when it returns. `pinned` repeats an expansion as
        it was first made (a resumed or replayed run)."""
        if not isinstance(self.mutator, AsyncMutator):
            raise TypeError(f"{self.mutator.name}: a synchronous mutator's expansions are made inline")
        parent = decision.node_id
        self._expanding += 1
        child_rng = np.random.default_rng(int(self.rng.integers(2**63)))
        task = asyncio.ensure_future(
            self.mutator.propose_async(
                self.state.files(parent), mutation_context(self.state, parent, decision.detail, pinned), child_rng
            )
        )
        return task, ExpansionLaunch(parent, decision.detail)

    def _finish_expansion(self, launch: ExpansionLaunch, task: asyncio.Future) -> str | None:
        self._expanding -= 1
        if task.cancelled():  # the run is stopping: no child; a paid answer stays in llm_calls for a resume
            return None
        error = task.exception()
        if isinstance(error, StopRun):
            return self._stop(error)
        outcome = ExpansionFailed.of(error) if error is not None else task.result()
        return self._expanded(store_child(self.state, self.mutator, launch.parent, outcome, launch.detail))

    def _expanded(self, result: ExpansionResult) -> str | None:
        self._invalid_streak = 0 if result.status == "valid" else self._invalid_streak + 1
        self.breaker.expansion(result.status, result.reason)
        if self.progress:
            self.progress.expanded(result)
        if self._breaker_stop():
            return self.fatal
        if self._invalid_streak >= MAX_INVALID_STREAK:
            return f"the mutator made {MAX_INVALID_STREAK} unusable children in a row (last: {result.reason})"
        return None

    # ----- evaluations ------------------------------------------------------
    def _launch(self, decision: Evaluate) -> tuple[asyncio.Task, Launch]:
        if decision.detail.get("repeat"):  # a re-run of a measured node: the tree's bookkeeping stays as it is
            self._repeating[decision.node_id] = self._repeating.get(decision.node_id, 0) + 1
        else:
            self.state.tree.start_evaluation(decision.node_id, decision.instance)
        launch = Launch(decision.node_id, decision.instance, self._free_workers.pop(0), decision.detail)
        files = self.state.files(decision.node_id)
        instance = self.state.dev[decision.instance]
        task = asyncio.ensure_future(self.handles.run_agent(self.state.task, files, instance, node_id=decision.node_id))
        return task, launch

    def _slot(self, worker: int) -> str:
        """The archive's worker of an evaluation on local slot `worker` (a backend that ran it elsewhere names
        itself instead): 'w0', or 'w0/docker' when each evaluation was a container."""
        return f"w{worker}/docker" if self.handles.sandbox.name == "docker" else f"w{worker}"

    def _record(self, launch: Launch, outcome: Outcome) -> str | None:
        """A finished evaluation: stored and counted; why the run stops, when it must."""
        state = self.state
        stopped = outcome.stopped()
        if stopped is not None:  # the run's LLM budget ran out under the agent (or its key was refused)
            self._release(launch)  # not its result: not stored, measured again by a resumed run
            return self._stop(stopped)
        instance = state.dev[launch.instance]
        score, metrics = scored(state.utility, self._task_score(launch, outcome), outcome)
        repeat = int(launch.detail.get("repeat", 0))
        record = outcome.record(
            launch.node, instance.id, "dev", score, repeat=repeat, metrics=metrics, worker=self._slot(launch.worker)
        )
        detail = {**launch.detail, "instance": instance.id, "score": score, "status": outcome.status}
        state.archive.add_evaluation(record, event=("evaluate", launch.node, detail), steps=outcome.trajectory)
        if self.early_stop is not None:
            self.early_stop.evaluated(launch.node, instance.id, repeat, score)
        if repeat:
            self._repeat_done(launch.node)
            state.repeat_measured(launch.node, score)
        else:
            state.record_dev_score(launch.node, launch.instance, score, ok=outcome.status == "ok")
            self.mutator.child_measured(launch.node)  # e.g. credit the model that wrote it (bandit)
            if launch.node == 0 and outcome.status == "ok":
                state.seed_metrics[instance.id] = outcome.metrics
        self._free(launch.worker)
        if self.progress:
            self.progress.evaluated(state, outcome, self.workers - len(self._free_workers))
        if launch.node == 0 and not repeat:
            return self._seed_evaluated(instance.id, outcome) or self._early_verdict()
        return self._early_verdict()

    def _task_score(self, launch: Launch, outcome: Outcome) -> float:
        """The task's score of a finished evaluation, against the seed's result on the same instance."""
        if outcome.status != "ok":
            return 0.0
        instance, task = self.state.dev[launch.instance], self.state.task
        if launch.node == 0 and not launch.detail.get("repeat"):  # the seed's first run anchors the rest
            return task.score(instance, outcome.metrics, outcome.metrics)
        return task.score(instance, outcome.metrics, self.state.seed_metrics.get(instance.id))

    def _seed_evaluated(self, instance_id: str, outcome: Outcome) -> str | None:
        """One more of the seed's dev evaluations: the run stops when every one of its first stage failed."""
        self._seed_done += 1
        if outcome.status != "ok":
            why = f"{outcome.status}: {outcome.feedback}" if outcome.feedback else outcome.status
            self._seed_failures.append((instance_id, why))
        verdict = self._seed_verdict()
        if verdict:
            self.fatal = verdict
        return verdict

    def _release(self, launch: Launch) -> None:
        """An evaluation that will not be recorded: the tree forgets it started, its worker is free again."""
        if launch.detail.get("repeat"):
            self._repeat_done(launch.node)
        else:
            self.state.tree.abandon_evaluation(launch.node, launch.instance)
        self._free(launch.worker)

    def _free(self, worker: int) -> None:
        self._free_workers.append(worker)
        self._free_workers.sort()

    def _repeat_done(self, node: int) -> None:
        self._repeating[node] -= 1
        if not self._repeating[node]:
            del self._repeating[node]

    # ----- the loop ---------------------------------------------------------
    async def run(self) -> str:
        """Search until the budget is spent, time is up, or nothing is left; return why it stopped."""
        pending: dict[asyncio.Task, Launch | ExpansionLaunch] = {}
        stop: str | None = None
        try:
            stop = self._seed_verdict()  # a resumed run whose seed failed everything
            if stop:
                self.fatal = stop
                return stop
            stop = self._early_verdict()  # a resumed run already past its patience or its target
            if stop:
                return stop
            for parent, key in self.mutator.orphans():
                # answered before a crash, never stored: finish them first, from the recorded answers
                adopted = Expand(parent, {"rule": "adopted after resume"})
                task, expansion = self._launch_expansion(adopted, Pinned(key=key))
                await asyncio.wait([task])
                stop = self._finish_expansion(expansion, task) or stop
            while True:
                if stop is None:
                    stop = self._lasting_stop()
                if stop and (self.fatal or stop in (TIME_LIMIT, self._stopped_early)):
                    self._cancel_expansions(pending)  # model work in flight cannot help now
                while stop is None and self._free_workers and self._spendable():
                    decision = self._next_decision()
                    if decision is None:
                        break
                    if isinstance(decision, Expand):
                        if not self.asynchronous:
                            stop = self._expand(decision)
                            continue
                        task, expansion = self._launch_expansion(decision)
                        if self.workers == 1:  # deterministic: the tree depends on the seed alone
                            stop = await self._await_inline(task)
                            stop = self._finish_expansion(expansion, task) or stop
                        else:
                            pending[task] = expansion
                        continue
                    task, launch = self._launch(decision)
                    pending[task] = launch
                    if self.progress:
                        self.progress.busy(self.workers - len(self._free_workers))
                if not pending:
                    if stop is None:
                        stop = "budget spent" if not self._spendable() else "nothing left to evaluate"
                    return stop
                timeout = None if stop else self._wake_in()
                done, _ = await asyncio.wait(pending, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    finished = pending.pop(task)
                    if isinstance(finished, ExpansionLaunch):
                        stop = self._finish_expansion(finished, task) or stop
                    else:
                        stop = self._record(finished, task.result()) or stop
        finally:
            await self._abandon(pending)

    async def _await_inline(self, task: asyncio.Future) -> str | None:
        """Wait for one expansion, watching the time limit and the breaker (which cancel it)."""
        while not task.done():
            await asyncio.wait([task], timeout=self._wake_in())
            if not task.done():
                stop = self._lasting_stop()
                if stop:
                    task.cancel()
                    await asyncio.gather(task, return_exceptions=True)
                    return stop
        return None

    @staticmethod
    def _cancel_expansions(pending: dict[asyncio.Task, Launch | ExpansionLaunch]) -> None:
        """The run is stopping: expansions in flight are cancelled (evaluations finish and are stored)."""
        for task, launch in pending.items():
            if isinstance(launch, ExpansionLaunch):
                task.cancel()

    async def _abandon(self, pending: dict[asyncio.Task, Launch | ExpansionLaunch]) -> None:
        """Cancel what is still in flight (Ctrl-C, errors): the sandboxes kill their processes."""
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        for launch in pending.values():
            if isinstance(launch, ExpansionLaunch):
                self._expanding -= 1
            else:
                self._release(launch)
        pending.clear()
