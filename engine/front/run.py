"""From the command line to a run carried to its summary: which run (new, resumed, replayed, restored), opened.

The jobs are each in their own module: the settings and what a resume may
change (engine/config), creating a run (creating.py), reopening one
(opening.py, snapshot.py), its mutator (mutator_choice.py), its header
(header.py) and its session (session.py).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from engine.config import RunConfig
from engine.errors import UserError
from engine.front.opened_run import Front, OpenedRun
from engine.front.opening import compile_check_for, needs_compiler, toolchains_for
from engine.front.session import carry

if TYPE_CHECKING:
    from archive import Archive
    from engine.mutators import Mutator
    from tasks.base import Task

__all__ = ["compile_check_for", "run_from_args", "run_opened"]

Opened = Literal["new", "resumed", "snapshot"]  # a new run (or a replay), --resume, --resume-from (a new folder)


def run_from_args(args: argparse.Namespace, llm_mock: Any = None) -> int:
    """Build or reopen the run the arguments describe and carry it to its summary.

    `llm_mock` (tests, demos) is handed to the LLM client, which passes its answers to litellm as
    `mock_response`, so the whole litellm code path runs without a network."""
    from engine.front.console import make_console

    archive, task, config = _open(args, llm_mock)
    how: Opened = "snapshot" if args.resume_from else "resumed" if args.resume else "new"
    return run_opened(archive, task, config, Front(make_console(), quiet=args.quiet, llm_mock=llm_mock), how)


def run_opened(
    archive: Archive, task: Task, config: RunConfig, front: Front, how: Opened, mutator: Mutator | None = None
) -> int:
    """Carry an opened run to its summary and close it; `mutator`: one given in Python (engine.front.api), else
    the one the configuration names."""
    run = _ready(archive, task, config, front.llm_mock, how)
    if run.config.output.live_interval > 0:  # readers (runs, plots, report, the live page) see the search as it runs
        run.archive.start_live_copy(run.config.output.live_interval)
    try:
        return carry(run, front, mutator)
    finally:
        close = getattr(run.box.sandbox, "close", None)
        if close is not None:
            close()
        run.archive.close()


def _open(args: argparse.Namespace, llm_mock: Any) -> tuple[Archive, Task, RunConfig]:
    """(archive, task, config) of the run the command line names: resumed, restored, replayed or new."""
    from archive import ArchiveError
    from engine.config.arguments import config_from_args
    from engine.front.creating import create_run
    from engine.front.opening import open_resumed, replay_config

    try:
        if args.resume_from:
            if args.resume or args.replay:
                raise UserError(
                    "--resume-from starts a new run from a snapshot: it goes with neither --resume nor --replay"
                )
            from engine.front.snapshot import open_from_snapshot

            return open_from_snapshot(args)
        if args.resume:
            if args.replay:
                raise UserError("--resume and --replay do not go together: resume the replayed run itself")
            return open_resumed(args)
        if args.replay:
            return create_run(replay_config(args))
        return create_run(config_from_args(args), llm_mock)
    except ArchiveError as exc:
        raise UserError(str(exc)) from None


def _ready(archive: Archive, task: Task, config: RunConfig, llm_mock: Any, how: Opened) -> OpenedRun:
    """The opened run with its sandbox and compile check; when they cannot be had, the archive closed and a
    folder made a moment ago for a new run taken back (it holds nothing but the seed)."""
    from engine.front.agent_llm import check_agent_llm
    from engine.front.backend import build_sandbox
    from engine.front.model_access import check_model_access

    resumed = how != "new"
    try:
        if resumed:  # a new run was checked before its folder was made
            check_agent_llm(config, task)
            check_model_access(config, task, llm_mock)
        toolchains = toolchains_for(task)  # the task's compiler on the engine's PATH, found once
        box = build_sandbox(
            config,
            config.search.resolved_workers(),
            toolchains,
            compiled=needs_compiler(task),
            run_dir=Path(archive.path).parent,
            task_image=task.docker_image(),
        )
        checks = compile_check_for(config, task, box.name, toolchains)
    except BaseException:
        archive.close()
        if how != "resumed":  # the folder made a moment ago holds nothing but the seed: no run to keep
            import shutil

            shutil.rmtree(Path(archive.path).parent, ignore_errors=True)
        raise
    return OpenedRun(archive, task, config, box, checks, resumed)
