"""One session of a search: from an opened run (engine/front/opened_run.py) to its summary.

`carry` runs the session: the policy's loop here, or the arena's rounds
(engine/front/arena_run.py); the async loop starts the gateway, probes the
models, runs the scheduler, then chooses and measures the final node.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.errors import UserError
from engine.front.cutting import stop_on_signals
from engine.front.endings import Interrupted, begin_session, end_session, run_session
from engine.front.opened_run import Front, OpenedRun

if TYPE_CHECKING:
    import numpy as np

    from engine.loop.evaluation import RunHandles
    from engine.loop.state import RunState
    from engine.mutators import Mutator
    from search.decisions import Policy


@dataclass
class Search:
    """What the session's loop works with, built from the opened run."""

    state: RunState
    handles: RunHandles  # the live handles: the sandbox, and the gateway while it serves
    policy: Policy
    mutator: Mutator
    client: Any  # the run's LLMClient (engine.llm), or None for a run that calls no model
    workers: int
    rng: np.random.Generator


def carry(run: OpenedRun, front: Front, mutator: Mutator | None = None) -> int:
    """Carry the opened run to its summary: the policy's loop, or the arena's rounds; the exit code.
    `mutator`: one given in Python (engine.front.api), else the one the configuration names."""
    from tasks.base import JudgedTask

    if run.config.benchmark.arena:  # testers co-evolve with the code agents: rounds instead of the policy's loop
        from engine.front.arena_run import carry_arena

        return carry_arena(run, front)
    work = _prepare(run, front, mutator)
    judge = run.config.benchmark.judge_model
    if judge and isinstance(run.task, JudgedTask):  # a rubric task: its answers are graded by this model, outside
        run.task.attach_judge(work.client, judge)
    return _search(run, front, work)


def _prepare(run: OpenedRun, front: Front, mutator: Mutator | None) -> Search:
    import numpy as np

    from engine.front.agent_llm import make_client
    from engine.front.mutator_choice import embedding_novelty, make_mutator
    from engine.loop.evaluation import RunHandles
    from engine.loop.state import RunState

    config, archive = run.config, run.archive
    client = make_client(config, archive, run.task, front.llm_mock)  # the meta-agent's and the agents' (gateway)
    state = RunState.rebuild(
        archive,
        run.task,
        utility=config.improvement.make_utility(),
        compile_check=run.checks[0],
        embedding_novelty=embedding_novelty(config, client, archive, run.task),
    )
    handles = RunHandles(run.box.sandbox)  # the gateway joins it once it serves (_session)
    mutator = mutator or make_mutator(config, state, client, front.console.print, handles)
    if run.resumed:
        rng = np.random.default_rng([config.search.seed, archive.next_event_seq])
    else:
        rng = np.random.default_rng(config.search.seed)
    return Search(state, handles, config.search.make_policy(), mutator, client, config.search.resolved_workers(), rng)


def _search(run: OpenedRun, front: Front, work: Search) -> int:
    from engine.front.header import header_lines
    from engine.front.summary import compute_summary, render_summary
    from engine.loop.scheduler import TIME_LIMIT

    begin_session(run, work.workers, work.state.dev_spent)
    for line in header_lines(run, work.state, work.policy, work.workers):
        front.console.print(line)
    limit = run.config.search.time_limit
    deadline = time.monotonic() + limit if limit else None
    try:
        stop, choice, fatal = run_session(lambda: _session(run, front, work, deadline), run.archive, front.console)
    except Interrupted as cut:
        return cut.code
    if fatal:
        end_session(run.archive, "interrupted", fatal)
        raise UserError(fatal)
    end_session(run.archive, "time_limit" if stop == TIME_LIMIT else "finished", stop)
    summary = compute_summary(
        run.archive,
        run.task,
        choice.node_id if choice else None,
        choice.rule if choice else "",
        stop,
        run.config.search.budget,
        spend=work.client.spent() if work.client else None,
    )
    render_summary(summary, front.console)
    return 0


async def _session(run: OpenedRun, front: Front, work: Search, deadline: float | None) -> tuple[Any, Any, str | None]:
    """(why the search stopped, the final choice, a fatal stop's line): the gateway up, the models probed, the
    search and its finale run."""
    from engine.front.agent_llm import serve_gateway
    from engine.front.model_access import probe_models
    from engine.front.progress import SearchProgress

    config, state = run.config, work.state
    stop_on_signals(front.cut)  # SIGTERM, or clade.search's Ctrl-C from another thread, cancels this task
    async with serve_gateway(config, run.task, work.client, run.archive) as gateway:
        work.handles.gateway = gateway  # agents that call a model reach it; None otherwise
        unanswered = await probe_models(config, run.task, work.client, front.llm_mock, run.archive)
        if unanswered:
            return None, None, f"{unanswered}; fix it, then resume: clade search --resume {run.folder}"
        budget = config.search.budget
        human = config.improvement.mutator == "human"  # a live bar would be redrawn over the person's typing
        with SearchProgress(
            front.console, budget, work.workers, quiet=front.quiet, done=state.dev_spent, bar=not human
        ) as progress:
            progress.start(state)
            return await _schedule(run, work, progress, deadline)


def early_stop(config, state: RunState):
    """--patience and --target, following the run's dev evaluations so far (a resumed run's from its archive)."""
    from engine.loop.early_stop import EarlyStop

    search = config.search
    watch = EarlyStop(len(state.dev), search.patience, search.stop_score())
    if not watch.active:
        return None
    history = state.archive.evaluations("dev")
    return watch.replay((e.node_id, e.instance_id, e.repeat, e.score) for e in history)


async def _schedule(run: OpenedRun, work: Search, progress: Any, deadline: float | None) -> tuple[Any, Any, str | None]:
    """The search itself, then its final node chosen and measured on holdout (and the references)."""
    from engine.loop.breaker import CircuitBreaker
    from engine.loop.finale import choose_final, holdout_plan, measure_holdout, measure_references, reference_plan
    from engine.loop.replay import make_scheduler
    from engine.loop.scheduler import SchedulerSettings
    from search.cascade import first_batch

    config, state, handles = run.config, work.state, work.handles
    breaker = CircuitBreaker(
        config.llm.max_failed_expansions,
        config.llm.max_failing_time,
        unusable=("failed", "invalid") if config.llm.model else ("failed",),
    )
    settings = SchedulerSettings(
        budget=config.search.budget,
        workers=work.workers,
        deadline=deadline,
        # one person answers one question at a time: the human mutator's expansions queue
        expansion_slots=1 if config.improvement.mutator == "human" else config.llm.llm_concurrency,
        seed_screen=first_batch(work.policy, len(state.dev)),
        early_stop=early_stop(config, state),
    )
    scheduler = make_scheduler(
        config, state, work.policy, work.mutator, handles, settings, work.rng, progress=progress, breaker=breaker
    )
    if work.client is not None:
        total = work.client.spent().total
        progress.count_model_calls(total.calls - total.failed, total.failed)
        work.client.observer = scheduler.model_call
    stop = await scheduler.run()
    if scheduler.fatal:
        then = (
            f"fix the cause, then resume: clade search --resume {run.folder}"
            if scheduler.resumable
            else f"the archive is kept for inspection: {run.folder}"
        )
        return stop, None, f"{scheduler.fatal}; {then}"
    choice = choose_final(state, work.policy, work.rng, config.search.budget)
    finalists = [choice.node_id] if choice else []
    progress.extra_work(len(holdout_plan(state, finalists)) + len(reference_plan(state)))
    await measure_holdout(state, handles, work.workers, finalists, progress)
    await measure_references(state, handles, work.workers, progress)
    return stop, choice, None
