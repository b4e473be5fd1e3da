"""Building a run from the command line, new or resumed, and carrying it to its summary."""
from __future__ import annotations

import asyncio
import signal
import time
from datetime import datetime
from pathlib import Path

from engine.config import RunConfig
from engine.errors import UserError

# Flags that define what a run is; a resumed run keeps its own.
LIMIT_FLAGS = ("eval_timeout", "memory_mb", "cpu_time", "max_procs", "output_bytes", "cpus")
FIXED_ON_RESUME = ("task", "target", "policy", "stages", "final", "final_k", "seed", "agent", "instances", "sandbox",
                   "image", "run_dir", *LIMIT_FLAGS,
                   "model", "api_base", "meta_steps", "answer_format", "model_choice", "replay",
                   "agent_model", "agent_max_tokens")
LLM_FLAGS = ("model", "api_base", "max_cost", "max_tokens", "llm_concurrency", "meta_steps", "answer_format",
             "model_choice", "agent_model", "agent_max_tokens")
# What may change when a stopped run goes on: how much to spend, how fast.
RESUME_OVERRIDES = ("budget", "workers", "time_limit", "max_cost", "max_tokens", "llm_concurrency", "executor",
                    "ray_address")


def _config_from_args(args) -> RunConfig:
    given = {k: getattr(args, k) for k in ("task", "target", "policy", "stages", "final", "final_k", "budget",
                                           "workers", "seed", "run_dir",
                                           "time_limit", "agent", "instances", "sandbox", "image",
                                           "executor", "ray_address", *LIMIT_FLAGS, *LLM_FLAGS)}
    if args.model:
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
    return stored.with_overrides(replay=path, run_dir=args.run_dir, workers=args.workers, executor=args.executor,
                                 ray_address=args.ray_address).validate()


def _new_run_folder(config: RunConfig) -> tuple[str, Path]:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    base = f"{Path(config.task).name}-{config.policy}-s{config.seed}-{stamp}"  # a task folder: its name
    root = Path(config.run_dir)
    run_id, k = base, 1
    while (root / run_id).exists():
        k += 1
        run_id = f"{base}-{k}"
    return run_id, root / run_id


def _make_task(config: RunConfig):
    """The run's task, with the run's overrides of its sandbox limits."""
    import math
    from dataclasses import replace

    from tasks import make_task

    try:
        task = make_task(config.task, config.instances, target=config.target)
    except ValueError as exc:  # a task folder that cannot be read as its format says
        raise UserError(str(exc)) from None
    limits = task.limits
    if config.eval_timeout:  # CPU time follows the wall limit unless given too
        limits = replace(limits, timeout_s=config.eval_timeout, cpu_s=max(1, math.ceil(config.eval_timeout)))
    overrides = {"memory_mb": config.memory_mb, "cpu_s": config.cpu_time, "processes": config.max_procs,
                 "output_bytes": config.output_bytes, "cpus": config.cpus}
    task.limits = replace(limits, **{k: v for k, v in overrides.items() if v is not None})
    return task


def _create(config: RunConfig):
    from archive import Archive, NodeRecord
    from archive.store import files_hash
    from engine.agent_files import load_agent
    from engine.mutators import check_child
    from tasks import TASKS
    from tasks.binpack.instances import InstanceFileError

    task = _make_task(config)
    try:
        instances = task.instances()
    except InstanceFileError as exc:
        raise UserError(str(exc)) from None
    if config.agent:
        files = load_agent(config.agent, task.entry_file)
        origin = config.agent
    else:
        files = task.seed_files()
        origin = f"the {task.name} seed"
    reason = check_child(files, task.entry_file, task.entry_function, task.entry_args)
    if reason:
        raise UserError(f"{origin} is not a usable agent: {reason}")
    config = config.with_overrides(agent=str(Path(config.agent).resolve()) if config.agent else None,
                                   task=str(Path(config.task).resolve()) if Path(config.task).is_dir()
                                   and config.task not in TASKS else None,
                                   instances=str(Path(config.instances).resolve()) if config.instances else None)
    run_id, folder = _new_run_folder(config)
    archive = Archive.create(folder / "archive.duckdb", run_id, config.to_dict(), config.seed)
    archive.add_instances([(i.id, i.split, i.data) for i in instances])
    root = NodeRecord(id=0, parent_id=None, depth=0, status="valid", mutator="seed", code_hash=files_hash(files),
                      description=f"from {origin}")
    archive.add_node(root, files, event=("start", 0, {"config": config.to_dict()}))
    return archive, task, config


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
        task = _make_task(config)  # instances come from the archive, not the file
    except Exception:
        archive.close()
        raise
    return archive, task, config


def run_from_args(args, llm_mock=None) -> int:
    """Build or reopen the run the arguments describe and carry it to its summary.

    `llm_mock` (tests, demos) is handed to the LLM client, which passes its answers to litellm as
    `mock_response`, so the whole litellm code path runs without a network."""
    from rich.console import Console

    from archive import ArchiveError

    console = Console(stderr=False, highlight=False)
    try:
        if args.resume_from:
            if args.resume or args.replay:
                raise UserError("--resume-from starts a new run from a snapshot: it goes with neither --resume "
                                "nor --replay")
            from engine.snapshot import open_from_snapshot

            archive, task, config = open_from_snapshot(args)
        elif args.resume:
            if args.replay:
                raise UserError("--resume and --replay do not go together: resume the replayed run itself")
            archive, task, config = _open(args)
        elif args.replay:
            archive, task, config = _create(_replay_config(args))
        else:
            archive, task, config = _create(_config_from_args(args))
    except ArchiveError as exc:
        raise UserError(str(exc)) from None
    try:
        from engine.agent_llm import check_agent_llm
        from engine.backend import build_sandbox

        check_agent_llm(config, task)
        sandbox, sandbox_said = build_sandbox(config, config.resolved_workers())
    except BaseException:
        archive.close()
        if not args.resume:  # the folder made a moment ago holds nothing but the seed: no run to keep
            import shutil

            shutil.rmtree(Path(archive.path).parent, ignore_errors=True)
        raise
    try:
        return _carry(archive, task, config, console, resumed=bool(args.resume or args.resume_from), quiet=args.quiet,
                      llm_mock=llm_mock, sandbox=sandbox, sandbox_said=sandbox_said)
    finally:
        close = getattr(sandbox, "close", None)
        if close is not None:
            close()
        archive.close()


def _mutator(config: RunConfig, state, archive, llm_mock):
    """The offline mutator, or the LLM mutator, and the run's LLM client (for a replay, with the recorded
    answers); the client also serves the agents' gateway (engine.agent_llm), so it exists when either calls."""
    from engine.agent_llm import make_client

    client = make_client(config, archive, state.task, llm_mock)
    if not config.model:
        from engine.mutators import OfflineMutator

        return OfflineMutator(), client
    from engine.model_choice import make_chooser
    from engine.mutators.llm import LLMMutator

    mutator = LLMMutator(client, make_chooser(config.model, config.model_choice), state,
                         answer_format=config.answer_format, diagnose=config.meta_steps.startswith("diagnose"))
    return mutator, client


def policy_label(policy, n_dev: int) -> str:
    """'hgm (staged: 3 of 16 dev instances first, the rest at a mean of 0.4 or more)': what runs."""
    stages, final, inner = [], None, policy
    while hasattr(inner, "inner"):
        if hasattr(inner, "threshold"):
            stages.append(f"{inner.stage.size(n_dev)} of {n_dev} dev instances first, more at a mean of "
                          f"{inner.threshold:g} or more")
        elif hasattr(inner, "rule"):
            final = inner.rule
        inner = inner.inner
    said = [f"staged: {'; then '.join(stages)}"] if stages else []
    said += [f"final rule {final}"] if final else []
    return policy.name + (f" ({', '.join(said)})" if said else "")


def _carry(archive, task, config: RunConfig, console, resumed: bool, quiet: bool, llm_mock, sandbox,
           sandbox_said: str) -> int:
    from engine.state import RunState
    state = RunState.rebuild(archive, task)
    workers = config.resolved_workers()
    policy = config.make_policy()
    mutator, client = _mutator(config, state, archive, llm_mock)
    return _search(archive, task, config, console, resumed, quiet, state, workers, policy, mutator, client,
                   sandbox, sandbox_said)


def _search(archive, task, config: RunConfig, console, resumed: bool, quiet: bool, state, workers: int, policy,
            mutator, client, sandbox, sandbox_said: str) -> int:
    import numpy as np

    from engine.agent_llm import describe, serve_gateway
    from engine.cli import EXIT_INTERRUPTED
    from engine.finale import choose_final, measure_holdout, measure_references
    from engine.progress import SearchProgress
    from engine.scheduler import Scheduler
    from engine.summary import compute_summary, render_summary

    if resumed:
        rng = np.random.default_rng([config.seed, archive._next_seq])
        archive.add_event("resume", None, {"budget": config.budget, "done": state.tree.evaluations_done})
    else:
        rng = np.random.default_rng(config.seed)
    archive.set_status("running")
    console.print(f"Run [bold]{archive.run_id}[/bold] -> {archive.path}")
    console.print(f"Task {task.name}, policy {policy_label(policy, len(state.dev))}, budget {config.budget} dev evaluations, "
                  f"{workers} workers, {sandbox_said}, seed {config.seed}"
                  + (f" (resumed at {state.tree.evaluations_done})" if resumed else ""))
    if not config.model:
        console.print("No LLM configured: the built-in offline mutator edits the agent's syntax tree "
                      "(no model calls, no cost).")
    else:
        limits = ", ".join(x for x in (f"max ${config.max_cost:g}" if config.max_cost else "",
                                        f"max {config.max_tokens} tokens" if config.max_tokens else "") if x)
        console.print(f"LLM mutator: {config.model} ({config.model_choice}), {config.llm_concurrency} calls at once"
                      + (f", {limits}" if limits else "")
                      + (f"; every answer replayed from {config.replay}" if config.replay else ""))
    agents_line = describe(config, task)
    if agents_line:
        console.print(agents_line)
    deadline = time.monotonic() + config.time_limit if config.time_limit else None

    async def main() -> tuple[str, object]:
        loop = asyncio.get_running_loop()
        current = asyncio.current_task()
        loop.add_signal_handler(signal.SIGTERM, current.cancel)
        async with serve_gateway(config, task, client) as gateway:
            state.gateway = gateway  # agents that call a model reach it; None otherwise
            with SearchProgress(console, config.budget, workers, quiet=quiet,
                                done=state.tree.evaluations_done) as progress:
                progress.start(state)
                scheduler = Scheduler(state, policy, mutator, sandbox, budget=config.budget, workers=workers,
                                      rng=rng, deadline=deadline, progress=progress,
                                      expansion_slots=config.llm_concurrency)
                stop = await scheduler.run()
                if scheduler.fatal:
                    return stop, None, scheduler.fatal
                choice = choose_final(state, policy, rng, config.budget)
                await measure_holdout(state, sandbox, workers, [choice.node_id] if choice else [], progress)
                await measure_references(state, sandbox, workers, progress)
        return stop, choice, None

    try:
        stop, choice, fatal = asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):
        archive.set_status("interrupted")
        console.print(f"\nInterrupted. Nothing finished is lost; continue with:\n"
                      f"  python -m engine.search --resume {Path(archive.path).parent}")
        return EXIT_INTERRUPTED
    if fatal:
        archive.set_status("interrupted")
        raise UserError(fatal)
    archive.set_status("finished")
    summary = compute_summary(archive, task, choice.node_id if choice else None,
                              choice.rule if choice else "", stop, config.budget,
                              spend=client.spent() if client else None)
    render_summary(summary, console)
    return 0
