"""A search from Python, with a task and a mutator of your own: the path `python -m engine.search` takes.

    from engine.config import RunConfig
    from engine.front.api import run_search

    run_search(RunConfig.of(budget=40, run_dir="runs"), MyTask(), MyMutator())

`task` is a `tasks.base.Task` and `mutator` an `engine.mutators.SyncMutator` or `AsyncMutator`, each
written from those declarations alone; either may be None for the one the configuration names. The run
is stored like any other (`python -m engine.runs show RUN` reads it); a task given here is used as it is
(its own limits and interpreter), and its run is resumed from Python, not by `--resume`, which builds
tasks by name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.config import RunConfig

if TYPE_CHECKING:
    from engine.mutators import Mutator
    from tasks.base import Task


def run_search(
    config: RunConfig, task: Task | None = None, mutator: Mutator | None = None, *, quiet: bool = True
) -> int:
    """Create the run, search, print its summary; 0, or a `UserError` (one line) as the command would exit 2.
    `quiet`: no progress bar. The stored configuration names the task and the mutator by their `name`."""
    from engine.front.console import make_console
    from engine.front.creating import create_run
    from engine.front.opened_run import Front
    from engine.front.run import run_opened

    config = config.validate()  # what is given replaces the configuration's names after the flags are checked
    config = config.with_overrides(task=task and task.name, mutator=mutator and mutator.name)
    archive, task, config = create_run(config, task=task)
    return run_opened(archive, task, config, Front(make_console(), quiet=quiet), "new", mutator)
