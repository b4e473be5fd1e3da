"""Building a run from the command line, new or resumed, and carrying it to its summary."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

from engine.config import RunConfig
from engine.errors import UserError
from engine.front.endings import Interrupted, run_session
from engine.front.endings import end_session as _end
from engine.front.endings import exposed_note as _exposed_note
from engine.front.opening import (
    ARENA_FLAGS,
    BREAKER_FLAGS,
    FIXED_ON_RESUME,
    LIMIT_FLAGS,
    LLM_FLAGS,
    RESUME_OVERRIDES,
    adopt_run_seed,
    make_run_task,
    new_run_folder,
)


def _config_from_args(args) -> RunConfig:
    given = {
        k: getattr(args, k)
        for k in (
            "task",
            "target",
            "policy",
            "stages",
            "final",
            "final_k",
            "budget",
            "workers",
            "seed",
            "run_dir",
            "time_limit",
            "agent",
            "instances",
            "sandbox",
            "image",
            "task_python",
            "executor",
            "ray_address",
            "gateway_listen",
            "gateway_tls",
            "compile_check",
            "live_interval",
            *LIMIT_FLAGS,
            *LLM_FLAGS,
            *BREAKER_FLAGS,
            *ARENA_FLAGS,
        )
    }
    if args.model and not args.mutator:
        given["mutator"] = "llm"
    return RunConfig().with_overrides(**given).validate()


def _replay_config(args) -> RunConfig:
    """The original run's configuration, to be run again with its recorded answers."""
    from archive import Archive

    for name in ("task", "target", "policy", "stages", "final", "final_k", "seed", "agent", "instances", *LLM_FLAGS):
        if getattr(args, name) is not None:
            raise UserError(f"--{name.replace('_', '-')} cannot be set with --replay: the replay repeats the original")
    with Archive.open(args.replay, read_only=True) as original:
        stored = RunConfig.from_dict(original.config())
        path = str(original.path.resolve())
    if not stored.model and not stored.agent_model:
        raise UserError(f"{args.replay} made no model calls (offline mutator): there is nothing to replay")
    return stored.with_overrides(
        replay=path,
        run_dir=args.run_dir,
        workers=args.workers,
        executor=args.executor,
        ray_address=args.ray_address,
        task_python=args.task_python,
        gateway_listen=args.gateway_listen,
        gateway_tls=args.gateway_tls,
        live_interval=args.live_interval,
    ).validate()


def _create(config: RunConfig, llm_mock=None):
    from archive import Archive, NodeRecord
    from archive.store import files_hash
    from engine.front.agent_files import load_agent
    from engine.front.agent_llm import check_agent_llm
    from engine.front.model_access import check_model_access
    from engine.mutators import check_child
    from tasks import TASKS
    from tasks.binpack.instances import InstanceFileError

    task = make_run_task(config)
    if config.arena:
        from engine.front.arena_run import check_arena

        check_arena(config, task)
    check_agent_llm(config, task)  # before anything is made: these are one line each
    check_model_access(config, task, llm_mock)
    try:
        instances = task.instances()
    except InstanceFileError as exc:
        raise UserError(str(exc)) from None
    files: dict[str, str] | None
    if config.bootstrap:
        if getattr(task, "has_seed", True):
            raise UserError(
                f"--bootstrap writes the seed of a public/private task folder that has none; "
                f"{config.task} has its own seed program"
            )
        files, origin = None, "the meta-agent"  # written once the run's archive can book the calls
    elif config.agent:
        files = load_agent(config.agent, task.entry_file)
        origin = config.agent
    else:
        files = task.seed_files()
        origin = f"the {task.name} seed"
    reason = files is not None and check_child(files, task.entry_file, task.entry_function, task.entry_args)
    if reason:
        raise UserError(f"{origin} is not a usable agent: {reason}")
    config = config.with_overrides(
        task_python=getattr(task, "python", None),  # the folder's entry, resolved
        agent=str(Path(config.agent).resolve()) if config.agent else None,
        task=str(Path(config.task).resolve()) if Path(config.task).is_dir() and config.task not in TASKS else None,
        instances=str(Path(config.instances).resolve()) if config.instances else None,
    )
    run_id, folder = new_run_folder(config)
    archive = Archive.create(folder / "archive.duckdb", run_id, config.to_dict(), config.seed)
    archive.add_instances([(i.id, i.split, i.data) for i in instances])
    if files is None:
        files, origin = _bootstrap(config, task, archive, llm_mock, folder)
    root = NodeRecord(
        id=0,
        parent_id=None,
        depth=0,
        status="valid",
        mutator="seed",
        code_hash=files_hash(files),
        description=f"from {origin}",
    )
    archive.add_node(root, files, event=("start", 0, {"config": config.to_dict()}))
    return archive, task, config


def _bootstrap(config: RunConfig, task, archive, llm_mock, folder: Path) -> tuple[dict[str, str], str]:
    """The seed the meta-agent writes from task.md (engine/front/bootstrap.py), its calls booked in the new
    run's archive; on failure the new run's folder goes (it holds no node) and the error is one line."""
    import shutil

    from engine.front.agent_llm import make_client
    from engine.front.bootstrap import write_seed
    from engine.mutators.model_choice import parse_models

    try:
        client = make_client(config, archive, task, llm_mock)
        source, tries = asyncio.run(write_seed(client, parse_models(config.model)[0][0], task))
    except BaseException:
        archive.close()
        shutil.rmtree(folder, ignore_errors=True)
        raise
    task.adopt_seed(source)
    return {task.entry_file: source}, f"the meta-agent, from data/public/task.md (--bootstrap, try {tries})"


def _open(args):
    from archive import Archive

    for name in FIXED_ON_RESUME:
        if getattr(args, name) is not None:
            raise UserError(f"--{name.replace('_', '-')} cannot change on --resume: a run keeps its own")
    archive = Archive.open(args.resume)
    try:
        stored = RunConfig.from_dict(archive.config())
        config = stored.with_overrides(**{k: getattr(args, k) for k in RESUME_OVERRIDES})
        config.validate()
        task = make_run_task(config)  # instances come from the archive, not the file
        adopt_run_seed(task, archive)
    except Exception:
        archive.close()
        raise
    return archive, task, config


def run_from_args(args, llm_mock=None) -> int:
    """Build or reopen the run the arguments describe and carry it to its summary.

    `llm_mock` (tests, demos) is handed to the LLM client, which passes its answers to litellm as
    `mock_response`, so the whole litellm code path runs without a network."""
    from archive import ArchiveError
    from engine.front.console import make_console

    console = make_console()
    try:
        if args.resume_from:
            if args.resume or args.replay:
                raise UserError(
                    "--resume-from starts a new run from a snapshot: it goes with neither --resume nor --replay"
                )
            from engine.front.snapshot import open_from_snapshot

            archive, task, config = open_from_snapshot(args)
        elif args.resume:
            if args.replay:
                raise UserError("--resume and --replay do not go together: resume the replayed run itself")
            archive, task, config = _open(args)
        elif args.replay:
            archive, task, config = _create(_replay_config(args))
        else:
            archive, task, config = _create(_config_from_args(args), llm_mock)
    except ArchiveError as exc:
        raise UserError(str(exc)) from None
    try:
        from engine.front.agent_llm import check_agent_llm
        from engine.front.backend import build_sandbox
        from engine.front.model_access import check_model_access

        if args.resume or args.resume_from:  # a new run was checked before its folder was made
            check_agent_llm(config, task)
            check_model_access(config, task, llm_mock)
        box = build_sandbox(config, config.resolved_workers())
        checks = compile_check_for(config, task, box.name)
    except BaseException:
        archive.close()
        if not args.resume:  # the folder made a moment ago holds nothing but the seed: no run to keep
            import shutil

            shutil.rmtree(Path(archive.path).parent, ignore_errors=True)
        raise
    if config.live_interval > 0:  # readers (runs, plots, report, the live page) see the search as it runs
        archive.start_live_copy(config.live_interval)
    try:
        return _carry(
            archive,
            task,
            config,
            console,
            resumed=bool(args.resume or args.resume_from),
            quiet=args.quiet,
            llm_mock=llm_mock,
            box=box,
            checks=checks,
        )
    finally:
        close = getattr(box.sandbox, "close", None)
        if close is not None:
            close()
        archive.close()


def _mutator(config: RunConfig, state, archive, llm_mock, say=None, sandbox=None):
    """The offline mutator, or the LLM mutator, and the run's LLM client (for a replay, with the recorded
    answers); the client also serves the agents' gateway (engine.front.agent_llm), so it exists when either calls."""
    from engine.front.agent_llm import make_client

    client = make_client(config, archive, state.task, llm_mock)
    if not config.model:
        from engine.mutators import OfflineMutator

        return OfflineMutator(), client
    from engine.mutators.llm import LLMMutator
    from engine.mutators.model_choice import make_chooser, parse_models

    if config.mutator == "self":  # the agent improves itself; it calls --model through the gateway
        from engine.loop.self_improve import SelfMutator

        model = parse_models(config.model)[0][0]
        return SelfMutator(client, model, state, sandbox, diagnose=config.meta_steps.startswith("diagnose")), client

    if config.embedding_model:  # near-duplicates by embeddings, asked in the mutator's conversation
        from engine.mutators.novelty import ArchiveEmbeddings, EmbeddingNovelty

        state.embedding_novelty = ArchiveEmbeddings(
            EmbeddingNovelty(client, config.embedding_model, entry_file=state.task.entry_file), archive, state.files
        )
    mutator = LLMMutator(
        client,
        make_chooser(config.model, config.model_choice),
        state,
        answer_format=config.answer_format,
        diagnose=config.meta_steps.startswith("diagnose"),
        say=say,
    )
    return mutator, client


def policy_label(policy, n_dev: int) -> str:
    """'hgm (staged: 3 of 16 dev instances first, the rest at a mean of 0.4 or more)': what runs."""
    stages, final, inner = [], None, policy
    while hasattr(inner, "inner"):
        if hasattr(inner, "threshold"):
            if inner.stage.size(n_dev) < n_dev:  # a batch of every dev instance (one-instance tasks) stages nothing
                stages.append(
                    f"{inner.stage.size(n_dev)} of {n_dev} dev instances first, more at a mean of "
                    f"{inner.threshold:g} or more"
                )
        elif hasattr(inner, "rule"):
            final = inner.rule
        inner = inner.inner
    said = [f"staged: {'; then '.join(stages)}"] if stages else []
    said += [f"final rule {final}"] if final else []
    return policy.name + (f" ({', '.join(said)})" if said else "")


def compile_check_for(config: RunConfig, task, sandbox_name: str) -> tuple[object | None, str]:
    """--compile-check for a task in a compiled language (engine/lang/compile_check.py): the check, or None, and
    the header's line saying which checks its children go through; ('' for Python tasks)."""
    from engine.lang.registry import language_of

    language = language_of(task.entry_file)
    if language is None:
        return None, ""
    from engine.lang.compile_check import choose

    try:
        return choose(language, config.compile_check, sandbox_name, config.executor)
    except ValueError as exc:
        raise UserError(str(exc)) from None


def _carry(
    archive,
    task,
    config: RunConfig,
    console,
    resumed: bool,
    quiet: bool,
    llm_mock,
    box,
    checks: tuple[object | None, str] = (None, ""),
) -> int:
    if config.arena:  # testers co-evolve with the code agents: rounds instead of the policy's loop
        from engine.front.arena_run import carry_arena

        return carry_arena(archive, task, config, console, resumed, llm_mock, box)
    from engine.loop.state import RunState

    state = RunState.rebuild(archive, task)
    workers = config.resolved_workers()
    policy = config.make_policy()
    state.utility = config.make_utility()
    state.compile_check = checks[0]
    mutator, client = _mutator(config, state, archive, llm_mock, say=console.print, sandbox=box.sandbox)
    if config.judge_model:  # a rubric task: its answers are graded by this model, outside the sandbox
        task.attach_judge(client, config.judge_model)
    return _search(
        archive,
        task,
        config,
        console,
        resumed,
        quiet,
        state,
        workers,
        policy,
        mutator,
        client,
        box,
        llm_mock,
        checks_said=checks[1],
    )


def _one_instance_note(state) -> str:
    """A task of one dev instance: what the noise probe does (search/evidence.py), or found on a resume."""
    if state.tree.n_instances != 1:
        return ""
    if state.noise_var is None:
        return (
            "One dev instance: the seed runs on it twice (a noise probe, counted in the budget); the two "
            "scores set how much one evaluation counts in the policy (search/evidence.py). If they differ, "
            "the last twentieth of the budget re-measures the best candidates for the final choice "
            "(search/remeasure.py)."
        )
    noisy = (
        " (noisy: the end of the budget re-measures the best candidates, search/remeasure.py)" if state.noisy() else ""
    )
    return f"One dev instance: one evaluation counts as w = {state.evidence():g} pass/fail trials (noise probe){noisy}."


def _seed_note(state, budget: int) -> str:
    """A budget the seed's own evaluations use up leaves nothing to expand: say so at the start."""
    n_dev = state.tree.n_instances
    left = n_dev - int(state.tree.n_evals[0])
    if left and state.dev_spent + left >= budget:
        return f"Note: the seed alone uses {n_dev} of {budget} dev evaluations: no expansion will run."
    return ""


def _search(
    archive,
    task,
    config: RunConfig,
    console,
    resumed: bool,
    quiet: bool,
    state,
    workers: int,
    policy,
    mutator,
    client,
    box,
    llm_mock=None,
    checks_said: str = "",
) -> int:
    import numpy as np

    from engine.front.agent_llm import describe, serve_gateway
    from engine.front.model_access import probe_models
    from engine.front.progress import SearchProgress
    from engine.front.summary import compute_summary, render_summary
    from engine.loop.breaker import CircuitBreaker
    from engine.loop.finale import choose_final, holdout_plan, measure_holdout, measure_references, reference_plan
    from engine.loop.replay import make_scheduler
    from engine.loop.scheduler import TIME_LIMIT
    from search.cascade import first_batch

    if resumed:
        rng = np.random.default_rng([config.seed, archive.next_event_seq])
        archive.add_event("resume", None, {"budget": config.budget, "done": state.dev_spent})
        # a raised budget (or any resume flag) holds for later resumes; keys RunConfig does not know stay
        archive.set_config({**archive.config(), **config.to_dict()})
    else:
        rng = np.random.default_rng(config.seed)
    archive.add_event(
        "session",
        None,
        {
            "workers": workers,
            "sandbox": box.name,
            "said": box.said,
            "executor": config.executor,
            "budget": config.budget,
            **({"checks": checks_said} if checks_said else {}),
        },
    )  # what was used
    archive.set_status("running")
    console.print(f"Run [bold]{archive.run_id}[/bold] -> {archive.path}")
    console.print(
        f"Task {task.name}, policy {policy_label(policy, len(state.dev))}, budget {config.budget} dev evaluations, "
        f"{workers} workers, {box.said}, seed {config.seed}" + (f" (resumed at {state.dev_spent})" if resumed else "")
    )
    if not config.model:
        console.print(
            "No LLM configured: the built-in offline mutator edits the agent's syntax tree (no model calls, no cost)."
        )
    elif config.mutator == "self":
        console.print(
            f"Self-improvement: each expansion runs the parent agent on a copy of its own code (calling "
            f"{config.model} through the gateway); a child must compile, keep {task.entry_function}() and "
            "solve a smoke instance" + (f"; every answer replayed from {config.replay}" if config.replay else "")
        )
    else:
        limits = ", ".join(
            x
            for x in (
                f"max ${config.max_cost:g}" if config.max_cost else "",
                f"max {config.max_tokens} tokens" if config.max_tokens else "",
            )
            if x
        )
        console.print(
            f"LLM mutator: {config.model} ({config.model_choice}), {config.llm_concurrency} calls at once"
            + (f", {limits}" if limits else "")
            + (f", near-duplicates by {config.embedding_model} embeddings" if config.embedding_model else "")
            + (f"; every answer replayed from {config.replay}" if config.replay else "")
        )
    for line in (
        checks_said[:1].upper() + checks_said[1:] + "." if checks_said else "",
        describe(config, task),
        state.utility.describe() if state.utility else "",
        f"Overseer: {config.overseer} reads each running agent's recent calls and may stop it"
        if config.overseer
        else "",
        _seed_note(state, config.budget),
        _one_instance_note(state),
        _exposed_note(task, box.name),
    ):
        if line:
            console.print(line)
    deadline = time.monotonic() + config.time_limit if config.time_limit else None
    folder = Path(archive.path).parent

    async def main() -> tuple[str, object]:
        loop = asyncio.get_running_loop()
        current = asyncio.current_task()
        loop.add_signal_handler(signal.SIGTERM, current.cancel)
        async with serve_gateway(config, task, client, archive) as gateway:
            state.gateway = gateway  # agents that call a model reach it; None otherwise
            unanswered = await probe_models(config, task, client, llm_mock, archive)
            if unanswered:
                return None, None, f"{unanswered}; fix it, then resume: python -m engine.search --resume {folder}"
            with SearchProgress(console, config.budget, workers, quiet=quiet, done=state.dev_spent) as progress:
                progress.start(state)
                breaker = CircuitBreaker(
                    config.max_failed_expansions,
                    config.max_failing_time,
                    unusable=("failed", "invalid") if config.model else ("failed",),
                )
                scheduler = make_scheduler(
                    config,
                    state,
                    policy,
                    mutator,
                    box.sandbox,
                    budget=config.budget,
                    workers=workers,
                    rng=rng,
                    deadline=deadline,
                    progress=progress,
                    expansion_slots=config.llm_concurrency,
                    breaker=breaker,
                    seed_screen=first_batch(policy, len(state.dev)),
                )
                if client is not None:
                    total = client.spent().total
                    progress.count_model_calls(total.calls - total.failed, total.failed)
                    client.observer = scheduler.model_call
                stop = await scheduler.run()
                if scheduler.fatal:
                    then = (
                        f"fix the cause, then resume: python -m engine.search --resume {folder}"
                        if scheduler.resumable
                        else f"the archive is kept for inspection: {folder}"
                    )
                    return stop, None, f"{scheduler.fatal}; {then}"
                choice = choose_final(state, policy, rng, config.budget)
                finalists = [choice.node_id] if choice else []
                progress.extra_work(len(holdout_plan(state, finalists)) + len(reference_plan(state)))
                await measure_holdout(state, box.sandbox, workers, finalists, progress)
                await measure_references(state, box.sandbox, workers, progress)
        return stop, choice, None

    try:
        stop, choice, fatal = run_session(main, archive, console)
    except Interrupted as cut:
        return cut.code
    if fatal:
        _end(archive, "interrupted", fatal)
        raise UserError(fatal)
    _end(archive, "time_limit" if stop == TIME_LIMIT else "finished", stop)
    summary = compute_summary(
        archive,
        task,
        choice.node_id if choice else None,
        choice.rule if choice else "",
        stop,
        config.budget,
        spend=client.spent() if client else None,
    )
    render_summary(summary, console)
    return 0
