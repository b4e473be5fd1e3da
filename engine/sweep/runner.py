"""Running a sweep: its unfinished cells, at most `parallel` at once, each a search of its own (engine/sweep/
launch.py says where), resumably.

What a cell has done is read from its run's archive each time (engine/sweep/manifest.py): a cell whose run
ended by itself is kept; one interrupted, or killed without writing its end, goes on with `--resume` to
exactly its budget; one never started starts. So a sweep stopped in any way (Ctrl-C, SIGTERM, kill -9 of its
process, a lost node) is finished by running it again, and nothing done is done twice.

`--max-cost` caps the whole sweep's model spend: each cell starts with a cap of its own, the money not yet
spent or promised to running cells shared equally among the cells still to run (so the caps never add up
to more than the sweep's), each held as `clade search --max-cost` holds it (engine/llm/budget.py: the call
that crosses a cap is its run's last, so the sweep may pass its cap by one call per cell).
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from engine.sweep.grid import Cell
from engine.sweep.launch import LOG, CellJob, Launcher
from engine.sweep.manifest import DONE, Sweep, cell_status, run_folder

POLL_S = 0.5  # how often running cells are looked at (each look is a poll of a process or one squeue)
STOP_WAIT_S = 120.0  # after a stop, how long a cell may take to store its run before it is killed


@dataclass
class Running:
    cell: Cell
    job: CellJob
    cap: float | None  # the max_cost this cell's search was given (dollars, its whole run's)
    started: float = field(default_factory=time.monotonic)


@dataclass
class Outcome:
    """How a sweep's session ended: the cells done before and now, those that failed (with their last line),
    those the cost cap left unstarted, and whether it was interrupted."""

    done_before: list[str] = field(default_factory=list)
    done_now: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    unfunded: list[str] = field(default_factory=list)
    interrupted: bool = False


Say = Callable[[str], None]


def cell_argv(sweep: Sweep, cell: Cell, cap: float | None) -> list[str]:
    """The cell's search command: a new run from its run file, or its stopped run resumed."""
    folder = sweep.cell_folder(cell).resolve()
    stored = run_folder(folder)
    argv = ["python", "-m", "engine.search", "--quiet"]
    if stored is None:
        argv += ["--config", str(folder / "run.toml"), "--run-dir", str(folder)]
    else:
        argv += ["--resume", str(stored)]
    if cap is not None:
        argv += ["--max-cost", f"{cap:.6f}"]
    return argv


def spent(sweep: Sweep, cell: Cell) -> float:
    """Dollars the cell's run has spent on model calls (0 before it made a run)."""
    folder = run_folder(sweep.cell_folder(cell))
    if folder is None:
        return 0.0
    from engine.runinfo.reading import open_read_only

    try:
        with open_read_only(folder) as archive:
            return archive.llm_spend()[0]
    except Exception:  # noqa: BLE001 - a damaged archive spent what it can no longer say; its cell fails on its own
        return 0.0


class SweepSession:
    """One session of a sweep: starts its unfinished cells and watches them until each has ended."""

    def __init__(self, sweep: Sweep, launcher: Launcher, say: Say) -> None:
        self.sweep, self.launcher, self.say = sweep, launcher, say
        self.running: list[Running] = []
        self.outcome = Outcome()
        self.stop_asked = threading.Event()
        self.total = len(sweep.cells)

    def run(self) -> Outcome:
        """Every unfinished cell run to its end, or until a stop is asked (`stop_asked`: the signal handlers
        set it); then each running cell is stopped and waited for, so its run is stored as interrupted."""
        queue = self._unfinished()
        while (queue or self.running) and not self.stop_asked.is_set():
            while queue and len(self.running) < self.sweep.parallel and not self.stop_asked.is_set():
                self._start(queue.pop(0), len(queue))
            self._reap()
            if self.running:
                self.stop_asked.wait(POLL_S)
        if self.stop_asked.is_set():
            self.outcome.interrupted = True
            self._stop_all()
        return self.outcome

    def _unfinished(self) -> list[Cell]:
        queue = []
        for cell in self.sweep.cells:
            if cell_status(self.sweep, cell) in DONE:
                self.outcome.done_before.append(cell.name)
                continue
            job = self.launcher.reattach(self.sweep.cell_folder(cell))
            if job is not None:  # a cluster job an earlier session submitted: watched, not started again
                self.say(f"{self._label(cell)}: still running as before, watched again")
                self.running.append(Running(cell, job, None))
                continue
            queue.append(cell)
        return queue

    def _start(self, cell: Cell, left_after: int) -> None:
        cap = self._cap(cell, left_after)
        if cap is not None and cap <= spent(self.sweep, cell):
            self.outcome.unfunded.append(cell.name)
            self.say(f"{self._label(cell)}: not started, the sweep's --max-cost is spent")
            return
        argv = cell_argv(self.sweep, cell, cap)
        how = "resumed" if run_folder(self.sweep.cell_folder(cell)) else "started"
        folder = self.sweep.cell_folder(cell)
        cpus = int(self.sweep.config(cell).search.workers or 1)
        self.running.append(Running(cell, self.launcher.start(argv, folder, cpus), cap))
        self.say(f"{self._label(cell)}: {how}")

    def _cap(self, cell: Cell, left_after: int) -> float | None:
        """This cell's whole-run cap: what it spent before, plus an equal share of what is neither spent by the
        cells not running nor promised to those running."""
        total = self.sweep.max_cost
        if total is None:
            return None
        running = {r.cell.name for r in self.running}
        spent_idle = sum(spent(self.sweep, c) for c in self.sweep.cells if c.name not in running)
        promised = sum(r.cap or 0.0 for r in self.running)
        mine = spent(self.sweep, cell)  # in spent_idle too: given back to it, as its run counts it
        free = total - spent_idle - promised
        return mine + max(0.0, free) / (left_after + 1)

    def _reap(self) -> None:
        for entry in [r for r in self.running if r.job.ended()]:
            self.running.remove(entry)
            self._ended(entry)

    def _ended(self, entry: Running) -> None:
        cell = entry.cell
        status = cell_status(self.sweep, cell)
        took = time.monotonic() - entry.started
        if status in DONE:
            self.outcome.done_now.append(cell.name)
            done = len(self.outcome.done_before) + len(self.outcome.done_now)
            self.say(f"{self._label(cell)}: {status} in {took:.0f} s{self._final(cell)} [{done}/{self.total} done]")
        elif not self.stop_asked.is_set():
            why = last_line(self.sweep.cell_folder(cell) / LOG) or f"its run is {status}"
            self.outcome.failed[cell.name] = why
            self.say(f"{self._label(cell)}: failed ({why})")

    def _final(self, cell: Cell) -> str:
        folder = run_folder(self.sweep.cell_folder(cell))
        try:
            from clade.run import Run

            node = Run(folder).best() if folder else None
        except Exception:  # noqa: BLE001 - a figure for the progress line only; the table reads it again
            return ""
        if node is None or node.holdout_mean is None:
            return ""
        return f", final #{node.id} holdout {node.holdout_mean:.3f}"

    def _stop_all(self) -> None:
        """Each running cell asked to stop as Ctrl-C would, then waited for; killed if it does not end."""
        for entry in self.running:
            entry.job.stop()
        deadline = time.monotonic() + STOP_WAIT_S
        while self.running:
            self._reap_stopped(deadline)
            if self.running:
                time.sleep(POLL_S)

    def _reap_stopped(self, deadline: float) -> None:
        for entry in list(self.running):
            if entry.job.ended() or time.monotonic() > deadline:
                if not entry.job.ended():
                    entry.job.kill()
                self.running.remove(entry)
                self.say(f"{self._label(entry.cell)}: {cell_status(self.sweep, entry.cell)}")

    def _label(self, cell: Cell) -> str:
        return f"{cell.group} seed {cell.seed}" if self.sweep.axes else f"seed {cell.seed}"


def last_line(log: Path) -> str:
    """The last non-empty line of a cell's log (an `error: ...` line, when its search refused or failed)."""
    try:
        with open(log, "rb") as fh:
            fh.seek(0, 2)
            fh.seek(max(0, fh.tell() - 8192))
            lines = [line.strip() for line in fh.read().decode(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    return lines[-1][:300] if lines else ""


def run_sweep(sweep: Sweep, launcher: Launcher, say: Say) -> Outcome:
    """The sweep's session with SIGINT and SIGTERM asking it to stop (each cell then stores its run as
    interrupted); the handlers are put back as they were when it ends."""
    session = SweepSession(sweep, launcher, say)

    def ask_stop(_signum: int, _frame: object) -> None:
        session.stop_asked.set()

    old = {number: signal.signal(number, ask_stop) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        return session.run()
    finally:
        for number, handler in old.items():
            signal.signal(number, handler)
        launcher.close()
