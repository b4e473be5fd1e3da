"""What every kind of run (a search, an arena) says at its start and writes at its end."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from archive.errors import is_disk_full
from engine.errors import EXIT_INTERRUPTED, UserError

if TYPE_CHECKING:
    from engine.front.opened_run import OpenedRun
    from tasks.base import Task


class Interrupted(Exception):
    """The session was cut short (Ctrl-C, SIGTERM) and ended as `interrupted`: exit with `code`."""

    code = EXIT_INTERRUPTED


def run_session(main, archive, console):
    """asyncio.run(main()) with the two ways every run is cut short: a one-line stop said while starting
    (the gateway's port taken) ends the session as interrupted and says how to resume; Ctrl-C or a signal
    ends it as interrupted, says so, and raises Interrupted. Nothing finished is lost either way."""
    folder = Path(archive.path).parent
    try:
        return asyncio.run(main())
    except UserError as exc:
        end_session(archive, "interrupted", str(exc))
        raise UserError(f"{exc}; fix it, then resume: clade search --resume {folder}") from None
    except (KeyboardInterrupt, asyncio.CancelledError):
        end_session(archive, "interrupted", "interrupted (Ctrl-C or a signal)")
        console.print(f"\nInterrupted. Nothing finished is lost; continue with:\n  clade search --resume {folder}")
        raise Interrupted from None
    except Exception as exc:
        if not is_disk_full(exc):  # a write of the archive's (ArchiveFull) or DuckDB's own, any other is a bug
            raise
        try:
            end_session(archive, "interrupted", "no space left on the device")
        except Exception as again:  # still full: the run reads as stopped, and resumes all the same
            if not is_disk_full(again):
                raise
        raise UserError(str(archive.full())) from None


def begin_session(run: OpenedRun, workers: int, done: int) -> None:
    """Record the session: a resume (and the settings it changed, which hold for later resumes), what it uses."""
    archive, config = run.archive, run.config
    if run.resumed:
        archive.add_event("resume", None, {"budget": config.search.budget, "done": done})
        # a raised budget (or any resume flag) holds for later resumes; keys RunConfig does not know stay
        archive.set_config({**archive.config(), **config.to_dict()})
    said = run.checks[1]
    archive.add_event(
        "session",
        None,
        {
            "workers": workers,
            "sandbox": run.box.name,
            "said": run.box.said,
            "executor": config.evaluation.executor,
            "budget": config.search.budget,
            **({"checks": said} if said else {}),
        },
    )  # what was used
    archive.set_status("running")


def end_session(archive, status: str, reason: str) -> None:
    """The session's end: a `stop` event (when and why; the wall time counts to it), then the status."""
    archive.add_event("stop", None, {"status": status, "reason": reason})
    archive.set_status(status)


def exposed_note(task: Task, backend: str) -> str:
    """The process backend cannot hide what the task keeps from agents (a public/private folder's answers)."""
    hidden = task.hidden_paths()
    if backend != "process" or not hidden:
        return ""
    return (
        f"Warning: the process sandbox cannot hide {', '.join(hidden)} from the agents (a program that knows "
        "the path can read it); use --sandbox bwrap or docker for agents you do not trust."
    )
