"""`clade.search` and `clade.open_run`: a search run from Python, and a stored run opened to read.

    import clade
    run = clade.search(budget=20, policy="hgm", quiet=True)   # blocks until the search ends
    run.best(), run.nodes()
    clade.open_run("runs/binpack-hgm-s0-20260101-120000")     # any run folder or archive file

Both raise `clade.UserError` with the one line `clade search` / `clade runs` would print for the same mistake.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from clade.run import Run
from engine.errors import UserError

if TYPE_CHECKING:
    from engine.config import RunConfig
    from engine.mutators import Mutator
    from tasks.base import Task


def search(
    config: RunConfig | None = None,
    *,
    task: Task | None = None,
    mutator: Mutator | None = None,
    quiet: bool = False,
    **settings: Any,
) -> Run:
    """Run a new search to its end and return it as a `Run`.

    `config`: a `clade.RunConfig` (None: the defaults `clade search` has); `settings`: any setting by the name
    `RunConfig.of` takes (the flag's name with `_` for `-`: budget=20, policy="hgm", workers=2,
    run_dir="runs"), over `config`. `task` / `mutator`: objects of your own (`clade.Task`,
    `clade.SyncMutator` or `clade.AsyncMutator`) in place of the ones the configuration names.
    `quiet`: print nothing; otherwise the header, progress and summary `clade search` prints.

    Raises `clade.UserError` for a bad setting or a run that cannot start or must stop (one line, the
    command's); KeyboardInterrupt on Ctrl-C, once the run is stored as interrupted."""
    from archive import ArchiveError
    from engine.front.api import run_search

    try:
        file = run_search(_configured(config, settings), task, mutator, quiet=quiet)
    except ArchiveError as exc:
        raise UserError(str(exc)) from None
    return Run(file.resolve())


def open_run(path: str | Path) -> Run:
    """A stored run, read-only: its folder or its archive.duckdb; a search still running it is read through
    its live copy. UserError (one line) for a path that is missing or holds no archive."""
    return Run(path)


def _configured(config: RunConfig | None, settings: dict[str, Any]) -> RunConfig:
    """`config` (or the defaults) with the keyword settings over it; a name RunConfig lacks is a UserError."""
    from difflib import get_close_matches

    from engine.config import RunConfig

    base = RunConfig() if config is None else config
    if not isinstance(base, RunConfig):
        raise UserError(f"config must be a clade.RunConfig or None, not {type(base).__name__}")
    known = [item.name for _, item in RunConfig.settings()]
    for name in settings:
        if name not in known:
            close = get_close_matches(name, known, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise UserError(f"clade.search has no setting {name!r}{hint}; the settings are RunConfig's")
    return RunConfig.from_dict({**base.to_dict(), **settings})  # every value given counts, None included
