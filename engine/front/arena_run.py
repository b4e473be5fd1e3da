"""`--arena`: a run whose testers co-evolve with its code agents (engine/arena), from the header to the summary."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

from engine.config import RunConfig
from engine.errors import UserError


def check_arena(config: RunConfig, task) -> None:
    """One line when the task cannot host an arena (it needs an oracle and a seed tester)."""
    from engine.arena.testers import supports_arena

    if not supports_arena(task):
        raise UserError(
            f"--arena needs a task with a trusted oracle and a seed tester; {task.name} has none "
            "(try --task email_validation)"
        )
    missing = getattr(task, "oracle_missing", lambda: None)()
    if missing:
        raise UserError(f"--arena: {missing}")


def _mutator_factory(config: RunConfig, archive, task, llm_mock, say):
    """(make_mutator(view), client): the offline mutator, or an LLM mutator over each population's view."""
    from engine.front.agent_llm import make_client

    client = make_client(config, archive, task, llm_mock)
    if not config.model:
        from engine.mutators import OfflineMutator

        offline = OfflineMutator()
        return (lambda view: offline), client
    from engine.mutators.llm import LLMMutator
    from engine.mutators.model_choice import make_chooser

    def make(view):
        return LLMMutator(
            client,
            make_chooser(config.model, config.model_choice),
            view,
            answer_format=config.answer_format,
            diagnose=config.meta_steps.startswith("diagnose"),
            say=say,
        )

    return make, client


def carry_arena(archive, task, config: RunConfig, console, resumed: bool, llm_mock, box) -> int:
    from engine.arena import ledger
    from engine.arena.rounds import TIME_LIMIT, Arena, ArenaSettings
    from engine.front.agent_llm import serve_gateway
    from engine.front.endings import Interrupted, end_session, exposed_note, run_session
    from engine.front.model_access import probe_models
    from engine.loop.breaker import CircuitBreaker

    check_arena(config, task)
    workers = config.resolved_workers()
    if resumed:
        archive.add_event("resume", None, {"budget": config.budget, "done": ledger.spent(archive)})
        archive.set_config({**archive.config(), **config.to_dict()})
    archive.add_event(
        "session",
        None,
        {
            "workers": workers,
            "sandbox": box.name,
            "said": box.said,
            "executor": config.executor,
            "budget": config.budget,
        },
    )
    archive.set_status("running")
    make_mutator, client = _mutator_factory(config, archive, task, llm_mock, console.print)
    settings = ArenaSettings(config.arena, config.arena_round, config.arena_population, config.arena_proposals)
    folder = Path(archive.path).parent
    console.print(f"Run [bold]{archive.run_id}[/bold] -> {archive.path}")
    console.print(
        f"Task {task.name}, arena ({_mode_said(settings)}), budget {config.budget} evaluations (code agents' "
        f"dev runs + testers' runs), {workers} workers, {box.said}, seed {config.seed}"
        + (f" (resumed at {ledger.spent(archive)})" if resumed else "")
    )
    console.print(
        "Testers propose tests; the task's oracle confirms each outside any sandbox, and the confirmed "
        "ones join the dev set. At the end every code agent is measured on the whole evolved set and on "
        "holdout (outside the budget)." + ("" if config.model else " Mutator: the built-in offline one.")
    )
    note = exposed_note(task, box.name)
    if note:
        console.print(note)
    deadline = time.monotonic() + config.time_limit if config.time_limit else None

    async def main() -> str:
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, asyncio.current_task().cancel)
        async with serve_gateway(config, task, client, archive) as gateway:
            unanswered = await probe_models(config, task, client, llm_mock, archive)
            if unanswered:
                return f"{unanswered}; fix it"
            breaker = CircuitBreaker(
                config.max_failed_expansions,
                config.max_failing_time,
                unusable=("failed", "invalid") if config.model else ("failed",),
            )
            if client is not None:
                client.observer = lambda ok, error: breaker.call(ok, error)
            arena = Arena(
                archive,
                task,
                settings,
                box.sandbox,
                workers=workers,
                budget=config.budget,
                seed=config.seed,
                make_mutator=make_mutator,
                gateway=gateway,
                say=console.print,
                deadline=deadline,
                breaker=breaker,
            )
            stop = await arena.run()
            if stop not in ("budget spent", TIME_LIMIT):
                return stop
            await arena.finale()
            return stop

    try:
        stop = run_session(main, archive, console)
    except Interrupted as cut:
        return cut.code
    if stop not in ("budget spent", TIME_LIMIT):
        end_session(archive, "interrupted", stop)
        raise UserError(f"{stop}; fix the cause, then resume: python -m engine.search --resume {folder}")
    end_session(archive, "time_limit" if stop == TIME_LIMIT else "finished", stop)
    render_arena_summary(archive, console, stop)
    return 0


def _mode_said(settings) -> str:
    if settings.mode == "single":
        return f"single: one code lineage against one tester lineage, {settings.every} code children per round"
    return (
        f"tournament: {settings.population} code agents and {settings.population} testers, the worst of each "
        f"replaced by a child of its best every {settings.every} rounds"
    )


def render_arena_summary(archive, console, stop: str) -> None:
    """Each round's champion and every code agent's three scores; the testers' scores."""
    from rich.table import Table

    from engine.arena import ledger

    counts = ledger.instance_counts(archive)
    played = ledger.rounds(archive)
    console.print(
        f"\nStopped: {stop}. {len(played)} rounds; dev set: {counts['task']} original instances + "
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
    console.print(f"Plot the scores over rounds: python scripts/plot_arena.py {folder}")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _spans(rounds: list[int]) -> str:
    if not rounds:
        return ""
    return f"{rounds[0]}-{rounds[-1]}" if len(rounds) > 1 else str(rounds[0])
