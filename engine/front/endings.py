"""What every kind of run (a search, an arena) says at its start and writes at its end."""
from __future__ import annotations


def end_session(archive, status: str, reason: str) -> None:
    """The session's end: a `stop` event (when and why; the wall time counts to it), then the status."""
    archive.add_event("stop", None, {"status": status, "reason": reason})
    archive.set_status(status)


def exposed_note(task, backend: str) -> str:
    """The process backend cannot hide what the task keeps from agents (a public/private folder's answers)."""
    from engine.loop.evaluation import hidden_paths

    hidden = hidden_paths(task)
    if backend != "process" or not hidden:
        return ""
    return (f"Warning: the process sandbox cannot hide {', '.join(hidden)} from the agents (a program that knows "
            "the path can read it); use --sandbox bwrap or docker for agents you do not trust.")
