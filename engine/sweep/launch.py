"""Where a sweep's cells run: here as child processes (`LocalCells`), or as jobs of a cluster
(engine/sweep/slurm_cells.py, engine/sweep/ray_cells.py). Each cell is the search command itself, `python -m
engine.search --config CELL/run.toml` (or `--resume RUN`), so a cell runs wherever the engine can, and its
evaluations as its own settings say (`--executor`, `--sandbox`).

A launcher starts a cell's command with its output appended to CELL/search.log and hands back a `CellJob`
the sweep polls; `stop` asks the search to stop as Ctrl-C does (it stores its run as interrupted, resumable).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

LOG = "search.log"
ENGINE_ROOT = Path(__file__).resolve().parents[2]  # the folder that holds the `engine` package


class CellJob(Protocol):
    def ended(self) -> bool:
        """Whether the cell's search has ended (by itself, stopped, or lost); never blocks."""

    def stop(self) -> None:
        """Ask the search to stop as Ctrl-C does: it stores its run as interrupted."""

    def kill(self) -> None:
        """End it now (a search that did not heed `stop`)."""


class Launcher(Protocol):
    name: str

    def start(self, argv: Sequence[str], cell_folder: Path, cpus: int) -> CellJob:
        """Run `argv` (a python command line: argv[0] is replaced by the interpreter where the cell runs) for
        the cell of `cell_folder`, with `cpus` CPUs, its output appended to `cell_folder/search.log`."""

    def reattach(self, cell_folder: Path) -> CellJob | None:
        """A job an earlier sweep process started for this cell that still runs (a cluster's job outlives
        the process that submitted it), else None."""

    def close(self) -> None:
        """Let go of what the launcher holds (a Ray connection); cells still running are the sweep's to stop."""


def cell_environment() -> dict[str, str]:
    """The environment a cell's search runs in: this one, with the engine importable from any folder and
    litellm kept off the network (its cost map read from the package)."""
    path = os.environ.get("PYTHONPATH", "")
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in (str(ENGINE_ROOT), path) if p),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "CLADE_SWEEP_CELL": "1",
    }


def _end_with_parent() -> None:
    """In the cell's process, before it runs: SIGTERM when the sweep's process dies (kill -9 too), so a cell
    never goes on unwatched; the search stores its run as interrupted and a resumed sweep resumes it."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class LocalProcess:
    """A cell's search as a child process of the sweep, in a session of its own (a terminal's Ctrl-C reaches
    the sweep, which stops each cell itself and waits for it to store its run)."""

    def __init__(self, process: subprocess.Popen) -> None:
        self.process = process

    def ended(self) -> bool:
        return self.process.poll() is not None

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()


class LocalCells:
    """Cells as child processes of the sweep on this machine."""

    name = "local"

    def start(self, argv: Sequence[str], cell_folder: Path, cpus: int) -> CellJob:
        cell_folder.mkdir(parents=True, exist_ok=True)
        with open(cell_folder / LOG, "ab") as log:
            process = subprocess.Popen(
                [sys.executable, *argv[1:]],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=cell_environment(),
                start_new_session=True,
                preexec_fn=_end_with_parent if sys.platform == "linux" else None,
            )
        return LocalProcess(process)

    def reattach(self, cell_folder: Path) -> CellJob | None:
        return None  # a local cell dies with the sweep's process (_end_with_parent)

    def close(self) -> None:
        pass
