"""Opening a run: what a new, resumed, replayed or restored run shares (its folder, its task), and reopening one.

Which flags a resume or a replay may change is declared with each setting
(engine/config); `open_resumed` and `replay_config` apply those rules.
"""

from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from engine.config import RunConfig
from engine.errors import UserError

if TYPE_CHECKING:
    from archive import Archive
    from engine.lang.compile_check import CompileCheck
    from engine.lang.toolchain import Toolchain
    from tasks.base import Task


def new_run_folder(config: RunConfig) -> tuple[str, Path]:
    """(run id, its folder under --run-dir): the task, policy, seed and time, never an existing folder."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    search = config.search
    how = f"arena-{config.benchmark.arena}" if config.benchmark.arena else search.policy
    base = f"{Path(search.task).name}-{how}-s{search.seed}-{stamp}"  # a task folder: its name
    root = Path(config.output.run_dir)
    run_id, k = base, 1
    while (root / run_id).exists():
        k += 1
        run_id = f"{base}-{k}"
    return run_id, root / run_id


def make_run_task(config: RunConfig):
    """The run's task, with the run's overrides of its sandbox limits and its interpreter (`task.python`:
    --task-python, else the task folder's `python` file; checked here, a UserError when unusable)."""
    import math
    from dataclasses import replace

    from engine.front.task_python import choose_task_python
    from tasks import make_task

    python = choose_task_python(config)
    search, evaluation = config.search, config.evaluation
    try:
        task = make_task(
            search.task, search.instances, target=search.target, agent_tests=config.benchmark.agent_tests == "on"
        )
    except ValueError as exc:  # a task folder that cannot be read as its format says
        raise UserError(str(exc)) from None
    if python is not None:
        task.python = python
    limits = task.limits
    if evaluation.eval_timeout:  # CPU time follows the wall limit unless given too
        timeout = evaluation.eval_timeout
        limits = replace(limits, timeout_s=timeout, cpu_s=max(1, math.ceil(timeout)))
    overrides = {
        "memory_mb": evaluation.memory_mb,
        "cpu_s": evaluation.cpu_time,
        "processes": evaluation.max_procs,
        "output_bytes": evaluation.output_bytes,
        "cpus": evaluation.cpus,
    }
    task.limits = replace(limits, **{k: v for k, v in overrides.items() if v is not None})
    return task


def stored_run_task(archive: Archive, config: RunConfig) -> Task:
    """The task of a run the archive already holds (resumed or restored): made by name, its instances from the
    archive rather than the file, its seed node 0's when --bootstrap wrote it. The archive is closed when that
    fails, so the caller's error leaves nothing open."""
    try:
        task = make_run_task(config)
        adopt_run_seed(task, archive)
    except Exception:
        archive.close()
        raise
    return task


def adopt_run_seed(task: Task, archive: Archive) -> None:
    """A run whose seed was written by --bootstrap: the task takes node 0's program as its seed (entry point)."""
    if not task.has_seed:
        task.adopt_seed(archive.node_files(0)[task.entry_file])


def open_resumed(args: argparse.Namespace) -> tuple[Archive, Task, RunConfig]:
    """(archive, task, config) of the stopped run `args.resume`, with what the command line may change."""
    from archive import Archive
    from engine.config.arguments import refuse_given, resumed_config, settings_kept

    refuse_given(args, settings_kept(), "cannot change on --resume: a run keeps its own")  # before the archive opens
    archive = Archive.open(args.resume)
    try:
        config = resumed_config(RunConfig.from_dict(archive.config()), args)
        config.validate()
    except Exception:
        archive.close()
        raise
    return archive, stored_run_task(archive, config), config


def replay_config(args: argparse.Namespace) -> RunConfig:
    """The original run's configuration, to be run again with its recorded answers."""
    from archive import Archive
    from engine.config.arguments import refuse_replayed, replayed_config

    refuse_replayed(args)
    with Archive.open(args.replay, read_only=True) as original:
        stored = RunConfig.from_dict(original.config())
        path = str(original.path.resolve())
    if not stored.llm.model and not stored.llm.agent_model and stored.improvement.mutator != "human":
        raise UserError(f"{args.replay} made no model calls (offline mutator): there is nothing to replay")
    return replayed_config(stored, args, path).validate()


def toolchains_for(task: Task) -> tuple[Toolchain, ...]:
    """The compiler of the task's language on the engine's PATH, found at run start (engine/lang/toolchain.py),
    or the task's own (`Task.toolchains`: Polyglot's six languages): the sandbox binds and passes what they need;
    () for Python tasks and where none is installed."""
    from engine.lang.registry import language_of

    own = task.toolchains()
    if own:
        return own
    language = language_of(task.entry_file)
    if language is None:
        return ()
    from engine.lang.compile_check import find_toolchains

    return find_toolchains(language)


def needs_compiler(task: Task) -> bool:
    """Whether the task's candidates are in a language a compiler builds (C, C++, Rust, Go, Fortran)."""
    from engine.lang.compile_check import COMMANDS
    from engine.lang.registry import language_of

    language = language_of(task.entry_file)
    return language is not None and language.name in COMMANDS


def compile_check_for(
    config: RunConfig, task: Task, sandbox_name: str, toolchains: tuple[Toolchain, ...] | None = None
) -> tuple[CompileCheck | None, str]:
    """--compile-check for a task in a compiled language (engine/lang/compile_check.py): the check, or None, and
    the header's line saying which checks its children go through and which compiler the language uses ('' for
    Python tasks). `toolchains`: what `toolchains_for` found (the sandbox's); None: looked up now."""
    from engine.lang.registry import language_of

    language = language_of(task.entry_file)
    if language is None:
        return None, ""
    from engine.lang.compile_check import choose

    try:
        ev = config.evaluation
        return choose(language, ev.compile_check, sandbox_name, ev.executor, toolchains, image=ev.image)
    except ValueError as exc:
        raise UserError(str(exc)) from None
