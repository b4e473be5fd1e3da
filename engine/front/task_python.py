"""Which Python runs a run's sandbox jobs: `--task-python`, else the task folder's `python` file.

The folder's entry is a file named `python` in the folder's root whose first
line is the path of an interpreter or a venv folder, relative to the folder or
absolute. Either is checked once, up front (it exists, runs, is Python 3.8 or
newer); anything wrong is one line (a UserError).
"""

from __future__ import annotations

from pathlib import Path

from engine.config import RunConfig
from engine.errors import UserError

ENTRY = "python"  # the task folder's file naming its interpreter


def folder_entry(task: str) -> Path | None:
    """The `python` file of the task folder `task`, if it is a folder (not a built-in task's name) and has one."""
    from tasks import TASKS

    path = Path(task) / ENTRY
    return path if task not in TASKS and Path(task).is_dir() and path.is_file() else None


def choose_task_python(config: RunConfig) -> str | None:
    """The absolute path of the interpreter the run's jobs use, checked; None: the engine's own."""
    from engine.sandbox.interpreter import find_python, inspect_python

    entry = None if config.evaluation.task_python else folder_entry(config.search.task)
    if config.evaluation.task_python:
        source, given, base = "--task-python", config.evaluation.task_python, None
    elif entry is not None:
        lines = [
            line.strip() for line in entry.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()
        ]
        if not lines:
            raise UserError(f"{entry} is empty: it should hold the path of the task's Python (or its venv)")
        source, given, base = f"{entry} (the task's Python)", lines[0], str(entry.parent.resolve())
        if config.evaluation.sandbox == "docker" or config.evaluation.image is not None:
            raise UserError(
                f"{entry} names the task's own Python, which --sandbox docker cannot run (the image "
                "holds its own): use --sandbox bwrap or process"
            )
    else:
        return None
    try:
        executable = find_python(given, relative_to=base)
        inspect_python(executable)
    except ValueError as exc:
        raise UserError(f"{source}: {exc}") from None
    return executable
