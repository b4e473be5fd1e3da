"""`--arena`: a run whose testers co-evolve with its code agents (engine/arena), from the header to the summary."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from engine.config import RunConfig
from engine.errors import UserError
from engine.front.cutting import stop_on_signals
from engine.front.opened_run import Front, OpenedRun
from engine.words import plural

if TYPE_CHECKING:
    from tasks.base import ArenaTask, Task


def check_arena(config: RunConfig, task: Task) -> ArenaTask:
    """One line when the task cannot host an arena (it needs an oracle and a seed tester); else the task."""
    from engine.arena.testers import supports_arena

    if not supports_arena(task):
        raise UserError(
            f"--arena needs a task with a trusted oracle and a seed tester; {task.name} has none "
            "(try --task email_validation)"
        )
    missing = task.oracle_missing()
    if missing:
        raise UserError(f"--arena: {missing}")
    return task


def _mutator_factory(config: RunConfig, archive, task, llm_mock, say):
    """(make_mutator(view), client): the offline mutator, or an LLM mutator over each population's view."""
    from engine.front.agent_llm import make_client
    from engine.front.mutator_choice import llm_mutator

    client = make_client(config, archive, task, llm_mock)
    if not config.llm.model:
        from engine.mutators import OfflineMutator

        offline = OfflineMutator()
        return (lambda view: offline), client
    return (lambda view: llm_mutator(config, client, view, say)), client


def carry_arena(run: OpenedRun, front: Front) -> int:
    """The arena's rounds from the header to the summary; the exit code."""
    from engine.arena import ledger
    from engine.arena.rounds import TIME_LIMIT, ArenaSettings
    from engine.front.endings import Interrupted, begin_session, end_session, run_session

    config, archive = run.config, run.archive
    workers = config.search.resolved_workers()
    begin_session(run, workers, ledger.spent(archive) if run.resumed else 0)
    make_mutator, client = _mutator_factory(config, archive, run.task, front.llm_mock, front.console.print)
    bench = config.benchmark
    limit = config.search.time_limit
    settings = ArenaSettings(
        str(bench.arena),
        bench.arena_round,
        bench.arena_population,
        bench.arena_proposals,
        budget=config.search.budget,
        workers=workers,
        seed=config.search.seed,
        deadline=time.monotonic() + limit if limit else None,
    )
    for line in _header(run, settings, workers):
        front.console.print(line)
    try:
        stop = run_session(lambda: _rounds(run, front, (settings, make_mutator, client)), archive, front.console)
    except Interrupted as cut:
        return cut.code
    if stop not in ("budget spent", TIME_LIMIT):
        end_session(archive, "interrupted", stop)
        raise UserError(f"{stop}; fix the cause, then resume: clade search --resume {run.folder}")
    end_session(archive, "time_limit" if stop == TIME_LIMIT else "finished", stop)
    render_arena_summary(archive, front.console, stop)
    return 0


def _header(run: OpenedRun, settings, workers: int) -> list[str]:
    """What an arena says before its first round."""
    from engine.arena import ledger
    from engine.front.endings import exposed_note

    archive, search = run.archive, run.config.search
    resumed = f" (resumed at {ledger.spent(archive)})" if run.resumed else ""
    lines = [
        f"Run [bold]{archive.run_id}[/bold] -> {archive.path}",
        f"Task {run.task.name}, arena ({_mode_said(settings)}), budget "
        f"{plural(search.budget, 'evaluation')} (code agents' dev runs + "
        f"testers' runs), {plural(workers, 'worker')}, "
        f"{run.box.said}, seed {search.seed}{resumed}",
        "Testers propose tests; the task's oracle confirms each outside any sandbox, and the confirmed "
        "ones join the dev set. At the end every code agent is measured on the whole evolved set and on "
        "holdout (outside the budget)." + ("" if run.config.llm.model else " Mutator: the built-in offline one."),
        exposed_note(run.task, run.box.name),
    ]
    return [line for line in lines if line]


async def _rounds(run: OpenedRun, front: Front, made: tuple) -> str:
    """The rounds, then the finale when they ended by the budget or the time limit; why they stopped.
    `made`: (the arena's settings, make_mutator(view), the LLM client)."""
    from engine.arena.rounds import TIME_LIMIT, Arena
    from engine.front.agent_llm import serve_gateway
    from engine.front.model_access import probe_models
    from engine.loop.breaker import CircuitBreaker
    from engine.loop.evaluation import RunHandles

    settings, make_mutator, client = made
    arena_task = check_arena(run.config, run.task)
    config, archive = run.config, run.archive
    stop_on_signals(front.cut)  # SIGTERM, or clade.search's Ctrl-C from another thread, cancels this task
    async with serve_gateway(config, run.task, client, archive) as gateway:
        unanswered = await probe_models(config, run.task, client, front.llm_mock, archive)
        if unanswered:
            return f"{unanswered}; fix it"
        breaker = CircuitBreaker(
            config.llm.max_failed_expansions,
            config.llm.max_failing_time,
            unusable=("failed", "invalid") if config.llm.model else ("failed",),
        )
        if client is not None:
            client.observer = lambda ok, error: breaker.call(ok, error)
        handles = RunHandles(run.box.sandbox, gateway)
        arena = Arena(
            archive, arena_task, settings, handles, make_mutator=make_mutator, say=front.console.print, breaker=breaker
        )
        stop = await arena.run()
        if stop not in ("budget spent", TIME_LIMIT):
            return stop
        await arena.finale()
        return stop


def _mode_said(settings) -> str:
    if settings.mode == "single":
        return f"single: one code lineage against one tester lineage, {plural(settings.every, 'code child')} per round"
    return (
        f"tournament: {settings.population} code agents and {settings.population} testers, the worst of each "
        f"replaced by a child of its best every {plural(settings.every, 'round')}"
    )


def render_arena_summary(archive, console, stop: str) -> None:
    """Each round's champion and every code agent's three scores; the testers' scores."""
    from rich.table import Table

    from engine.arena import ledger

    counts = ledger.instance_counts(archive)
    played = ledger.rounds(archive)
    console.print(
        f"\nStopped: {stop}. {plural(len(played), 'round')}; dev set: {plural(counts['task'], 'original instance')} + "
        f"{counts['arena']} confirmed by the oracle from testers' proposals; holdout {counts['holdout']} "
        "(fixed, hidden)."
    )
    table = Table(title="Code agents (mean score: original dev set / evolved dev set / holdout)")
    for column in ("node", "parent", "original", "evolved", "holdout", "champion of rounds"):
        table.add_column(column, justify="right")
    champions: dict[int, list[int]] = {}
    for detail in played:
        champions.setdefault(int(detail["champion"]), []).append(int(detail["round"]))
    parents = archive.node_parents()
    scores = ledger.node_scores(archive)
    for s in scores:
        if s.role == "agent" and s.status == "valid":
            table.add_row(
                str(s.node),
                "-" if parents.get(s.node) is None else str(parents[s.node]),
                _pct(s.original),
                _pct(s.evolved),
                _pct(s.holdout),
                _spans(champions.get(s.node, [])),
            )
    console.print(table)
    testers = [s for s in scores if s.role == "tester" and s.tester is not None]
    if testers:
        line = ", ".join(f"node {s.node} {_pct(s.tester)}" for s in testers)
        console.print(f"Testers (mean share of the round's code agents their confirmed tests broke): {line}")
    from engine.runinfo.reading import final_choice

    final = final_choice(archive)
    if final:
        s = next(x for x in scores if x.node == final[0])
        console.print(
            f"Final agent: node {final[0]} ({final[1]}): original {_pct(s.original)}, evolved "
            f"{_pct(s.evolved)}, holdout {_pct(s.holdout)}"
        )
    folder = Path(archive.path).parent
    console.print(f"Plot the scores over rounds: clade plot arena {folder}")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _spans(rounds: list[int]) -> str:
    if not rounds:
        return ""
    return f"{rounds[0]}-{rounds[-1]}" if len(rounds) > 1 else str(rounds[0])
