"""A search from Python, with a task and a mutator of your own: the path `python -m engine.search` takes.

    from engine.config import RunConfig
    from engine.front.api import run_search

    archive_file = run_search(RunConfig.of(budget=40, run_dir="runs"), MyTask(), MyMutator())

`task` is a `tasks.base.Task` and `mutator` an `engine.mutators.SyncMutator` or `AsyncMutator`, each
written from those declarations alone; either may be None for the one the configuration names. The run
is stored like any other (`python -m engine.runs show RUN` reads it); a task given here is used as it is
(its own limits and interpreter), and its run is resumed from Python, not by `--resume`, which builds
tasks by name. `clade.search` (clade/api.py) is this with keyword settings and a `clade.Run` back.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from engine.config import RunConfig
from engine.errors import EXIT_INTERRUPTED

if TYPE_CHECKING:
    from engine.front.cutting import CutShort
    from engine.mutators import Mutator
    from tasks.base import Task


def run_search(
    config: RunConfig,
    task: Task | None = None,
    mutator: Mutator | None = None,
    *,
    quiet: bool = True,
    cut: CutShort | None = None,
) -> Path:
    """Create the run, search, print its summary; the new run's archive file.

    A bad setting or a run that cannot start raises `UserError` (the one line the command prints before it
    exits 2); Ctrl-C (or SIGTERM) raises KeyboardInterrupt once the run is stored as interrupted, so it can
    be resumed. `quiet`: nothing printed at all (the command's --quiet drops the progress bar only). `cut`:
    how a caller on another thread stops the session (engine/front/cutting.py). The stored configuration
    names the task and the mutator by their `name`."""
    from engine.front.console import make_console
    from engine.front.creating import create_run
    from engine.front.opened_run import Front
    from engine.front.run import run_opened

    config = config.validate()  # what is given replaces the configuration's names after the flags are checked
    config = config.with_overrides(task=task and task.name, mutator=mutator and mutator.name)
    console = make_console()
    console.quiet = quiet
    archive, task, config = create_run(config, task=task)
    file = Path(archive.path)  # run_opened closes the archive: its path is known before
    if run_opened(archive, task, config, Front(console, quiet=quiet, cut=cut), "new", mutator) == EXIT_INTERRUPTED:
        raise KeyboardInterrupt(f"the search was interrupted; {file.parent.resolve()} is stored as interrupted")
    return file
