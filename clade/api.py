"""`clade.search` and `clade.open_run`: a search run from Python, and a stored run opened to read.

    import clade
    run = clade.search(budget=20, policy="hgm", quiet=True)   # blocks until the search ends
    run.best(), run.nodes()
    clade.open_run("runs/binpack-hgm-s0-20260101-120000")     # any run folder or archive file

Both raise `clade.UserError` with the one line `clade search` / `clade runs` would print for the same mistake.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clade.run import Run
from engine.errors import UserError

if TYPE_CHECKING:
    from engine.config import RunConfig
    from engine.mutators import Mutator
    from tasks.base import Task


def search(
    config: RunConfig | str | Path | None = None,
    *,
    task: Task | None = None,
    mutator: Mutator | None = None,
    quiet: bool = False,
    **settings: Any,
) -> Run:
    """Run a new search to its end and return it as a `Run`.

    `config`: a `clade.RunConfig`, or the path of a run file (TOML, as `clade search --config` reads it and
    `clade search --print-config` writes it), or None (the defaults `clade search` has); `settings`: any
    setting by the name `RunConfig.of` takes (the flag's name with `_` for `-`: budget=20, policy="hgm", workers=2,
    run_dir="runs"), over `config`. `task` / `mutator`: objects of your own (`clade.Task`,
    `clade.SyncMutator` or `clade.AsyncMutator`) in place of the ones the configuration names.
    `quiet`: print nothing; otherwise the header, progress and summary `clade search` prints.

    Raises `clade.UserError` for a bad setting or a run that cannot start or must stop (one line, the
    command's); KeyboardInterrupt on Ctrl-C, once the run is stored as interrupted. Where an event loop
    already runs on this thread (a Jupyter notebook), the search runs on a thread of its own meanwhile."""
    from archive import ArchiveError
    from engine.front.api import run_search
    from engine.front.cutting import CutShort

    configured = _configured(config, settings)
    cut = CutShort()
    try:
        file = _beside_a_running_loop(lambda: run_search(configured, task, mutator, quiet=quiet, cut=cut), cut)
    except ArchiveError as exc:
        raise UserError(str(exc)) from None
    return Run(file.resolve())


def open_run(path: str | Path) -> Run:
    """A stored run, read-only: its folder or its archive.duckdb; a search still running it is read through
    its live copy. UserError (one line) for a path that is missing or holds no archive."""
    return Run(path)


def _beside_a_running_loop(search: Callable[[], Path], cut: Callable[[], None]) -> Path:
    """`search()` here, or, where an event loop runs on this thread (a notebook's cell runs inside one, and
    asyncio.run refuses to start another there), on a thread of its own while this one waits; Ctrl-C while
    it waits asks the search to stop (`cut`) and waits for it to store the run as interrupted."""
    import asyncio
    import threading

    try:
        asyncio.get_running_loop()
    except RuntimeError:  # none: the usual case, a script or a terminal
        return search()
    outcome: list[Any] = []
    done = threading.Event()  # not Thread.join: a join cut by Ctrl-C may return at once the next time

    def work() -> None:
        try:
            outcome.append(search())
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread as it is
            outcome.append(exc)
        finally:
            done.set()

    threading.Thread(target=work, name="clade-search", daemon=True).start()
    try:
        while not done.wait(0.2):  # a short wait: Ctrl-C is taken between two
            pass
    except KeyboardInterrupt:
        cut()
        done.wait()
    (result,) = outcome
    if isinstance(result, BaseException):
        raise result
    return result


def _configured(config: RunConfig | str | Path | None, settings: dict[str, Any]) -> RunConfig:
    """`config` (or the defaults) with the keyword settings over it; a name RunConfig lacks is a UserError."""
    from difflib import get_close_matches

    from engine.config import RunConfig

    base = _run_file(config, settings) if isinstance(config, str | Path) else config or RunConfig()
    if not isinstance(base, RunConfig):
        raise UserError(f"config must be a clade.RunConfig, a run file's path or None, not {type(base).__name__}")
    known = [item.name for _, item in RunConfig.settings()]
    for name in settings:
        if name not in known:
            close = get_close_matches(name, known, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise UserError(f"clade.search has no setting {name!r}{hint}; the settings are RunConfig's")
    return RunConfig.from_dict({**base.to_dict(), **settings})  # every value given counts, None included


def _run_file(path: str | Path, settings: dict[str, Any]) -> RunConfig:
    """The configuration a run file gives, its values checked with the keyword settings over them, as
    `clade search --config FILE --flag ...` checks them: an error names the file's key."""
    from engine.config.arguments import config_of
    from engine.config.run_file import check_values, read_run_file

    from_file = read_run_file(path)
    check_values(path, from_file, settings)
    return config_of(from_file)
