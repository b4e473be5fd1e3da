"""A sweep's cells as Slurm batch jobs (`clade sweep --cells-on slurm`).

Each cell is one job: `sbatch --parsable --wrap "exec <python> -m engine.search --config CELL/run.toml"` with
one task of `cpus` CPUs, the partition and extra options of the sweep's own Slurm settings
(`--slurm-partition`, `--slurm-option`), its output appended to CELL/search.log, and the
environment of `cell_environment()` (sbatch's --export=ALL): the engine's checkout on PYTHONPATH and this
machine's Python. So the nodes must share the filesystem and Python with this machine, as `--executor slurm`
requires: the cell folder (its run.toml, its log, its run's archive), the checkout and `sys.executable`.

Why plain sbatch and not submitit (which `--executor slurm` uses): a cell is a command line, not a Python
call; there is nothing to pickle and no result file to carry back (the cell's run is its archive), and
submitit's wrapper would sit between Slurm's signals and the search. With `exec`, the batch step's process
*is* the search, so `scancel --batch --signal=INT` reaches it as a Ctrl-C does and it stores its run as
interrupted (without --batch, Slurm sends signals other than KILL to job steps only, never the batch script).

The job's id goes to CELL/job.json as soon as sbatch answers, and every job carries the cell folder in its
comment, so a later sweep process (the first killed) finds a job of the cell still queued or running
(`reattach`) rather than starting a second search on the same cell. States are read as the Slurm executor
reads them, one `squeue` for all jobs in flight per poll: `sacct` needs accounting (slurmdbd), which many
clusters and the single-node Slurm of the tests lack.

`--slurm-time` is not a cell's limit: it bounds one evaluation's job (`--executor slurm`), and a cell is a
whole search; the partition's own limit holds, or `--slurm-option time=...`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine.errors import UserError
from engine.sandbox.slurm_executor import (
    CHECK_TIMEOUT_S,
    ENDED,
    POLL_S,
    _check_cluster,
    _check_options,
    _first,
    _squeue,
)
from engine.sandbox.slurm_options import parse_slurm_options
from engine.sweep.launch import LOG, CellJob, cell_environment

__all__ = ["JOB_FILE", "SlurmCell", "SlurmCells"]

JOB_FILE = "job.json"
SUBMIT_TIMEOUT_S = 60.0  # sbatch retries a controller that does not answer for about 10 s
TOOLS = ("sbatch", "squeue", "scancel", "sinfo")
# what the launcher sets itself, whatever --slurm-option says (those options are meant for evaluation jobs)
OWN = ("nodes", "ntasks", "cpus_per_task", "job_name", "comment", "export")


class _States:
    """The states of the jobs in flight, from one squeue for all of them, read at most every `poll_s`."""

    def __init__(self, poll_s: float) -> None:
        self.poll_s = poll_s
        self.in_flight: set[str] = set()
        self.states: dict[str, str] = {}
        self.read_at = 0.0

    def state(self, job_id: str, fresh: bool = False) -> str | None:
        """squeue's state of the job; None when squeue no longer lists it; UNKNOWN when squeue failed."""
        if fresh or time.monotonic() - self.read_at >= self.poll_s or job_id not in self.states:
            self.states = _squeue(sorted(self.in_flight | {job_id}))
            self.read_at = time.monotonic()
        return self.states.get(job_id)


class SlurmCell:
    """One cell's Slurm job, as the sweep polls and stops it."""

    def __init__(self, job_id: str, states: _States) -> None:
        self.job_id = job_id
        self._states = states
        self._ended = False
        states.in_flight.add(job_id)

    def ended(self) -> bool:
        if not self._ended:
            state = self._states.state(self.job_id)
            # gone from squeue (MinJobAge passed) or in a final state; UNKNOWN (squeue failed) is not an end
            if state is None or state.split()[0] in ENDED:
                self._ended = True
                self._states.in_flight.discard(self.job_id)
        return self._ended

    def stop(self) -> None:
        """SIGINT to the search (the batch step's process, by exec); a job still pending is simply cancelled."""
        if self._ended:
            return
        if self._states.state(self.job_id, fresh=True) == "PENDING":
            _scancel(self.job_id)
        elif not _scancel(self.job_id, "--batch", "--signal=INT"):
            if self._states.state(self.job_id, fresh=True) == "PENDING":
                _scancel(self.job_id)  # pending after all (Slurm cannot signal a job that has not started)

    def kill(self) -> None:
        """SIGKILL to the search now, then the job cancelled (a pending one, and whatever the search left).
        (`scancel --signal=KILL` without --batch is a plain scancel: SIGTERM first, SIGKILL after KillWait.)"""
        if not self._ended:
            _scancel(self.job_id, "--batch", "--signal=KILL")
            _scancel(self.job_id)


class SlurmCells:
    """Cells as Slurm batch jobs; see the module docstring."""

    name = "slurm"

    def __init__(self, config: Any, *, poll_s: float = POLL_S) -> None:
        """config: the sweep's shared RunConfig (its evaluation section's Slurm settings).

        UserError (one line) when Slurm's commands are missing here, the cluster does not answer, or sbatch
        refuses the options."""
        evaluation = config.evaluation
        _require_tools(evaluation.executor)
        options: dict[str, str] = {}
        if evaluation.slurm_partition:
            options["partition"] = evaluation.slurm_partition
        # not --slurm-time: it bounds one evaluation's job, and a cell is a whole search (the partition's own
        # limit holds, or --slurm-option time=...)
        try:
            extra = parse_slurm_options(evaluation.slurm_option or [])
        except ValueError as exc:
            raise UserError(str(exc)) from None
        options.update({key: value for key, value in extra.items() if key not in OWN})
        try:
            _check_cluster(evaluation.slurm_partition)
            _check_options(options)
        except RuntimeError as exc:
            raise UserError(f"--cells-on slurm: {exc}") from None
        self.options = options
        self._states = _States(poll_s)

    def start(self, argv: Sequence[str], cell_folder: Path, cpus: int) -> CellJob:
        cell_folder = cell_folder.resolve()
        cell_folder.mkdir(parents=True, exist_ok=True)
        own = {"nodes": "1", "ntasks": "1", "cpus_per_task": str(cpus), "job_name": job_name(cell_folder),
               "comment": str(cell_folder), "export": "ALL"}  # fmt: skip
        flags = [f"--{key.replace('_', '-')}={value}" for key, value in {**self.options, **own}.items()]
        command = [
            "sbatch", "--parsable", f"--output={cell_folder / LOG}", "--open-mode=append", *flags,
            f"--wrap=exec {shlex.join([sys.executable, *argv[1:]])}",
        ]  # fmt: skip
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, env=cell_environment(), timeout=SUBMIT_TIMEOUT_S
            )
        except subprocess.TimeoutExpired:
            raise UserError(f"--cells-on slurm: sbatch did not answer within {SUBMIT_TIMEOUT_S:g} s") from None
        except OSError as exc:
            raise UserError(f"--cells-on slurm: cannot run sbatch: {exc}") from None
        job_id = done.stdout.strip().split(";")[0]
        if done.returncode != 0 or not job_id.isdigit():
            said = _first(done.stderr).removeprefix("sbatch: error: ")
            raise UserError(f"--cells-on slurm: sbatch refused the job of cell {cell_folder.name}: {said}")
        _write_job_file(cell_folder, job_id)
        return SlurmCell(job_id, self._states)

    def reattach(self, cell_folder: Path) -> CellJob | None:
        """The cell's job still queued or running: the one CELL/job.json names, else any job of this cell (a
        sweep killed between sbatch and writing job.json); None when there is none."""
        cell_folder = cell_folder.resolve()
        alive = _alive_jobs(job_name(cell_folder), str(cell_folder))
        if not alive:
            return None
        recorded = _read_job_file(cell_folder)
        job_id = recorded if recorded in alive else alive[-1]
        return SlurmCell(job_id, self._states)

    def close(self) -> None:
        pass  # nothing held: jobs outlive the sweep's process by design, and the sweep stops its cells itself


def job_name(cell_folder: Path) -> str:
    return f"clade-sweep-{cell_folder.name}"


def _require_tools(executor: str) -> None:
    """UserError (one line) unless this machine has Slurm's commands (is a submit host)."""
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if not missing:
        return
    hint = "apt-get install slurm-client"
    if executor == "slurm":
        from engine.install import install_extra

        hint += f", and for --executor slurm: {install_extra('slurm')}"
    raise UserError(f"--cells-on slurm: {missing[0]} not found on PATH (not a Slurm submit host: {hint})")


def _alive_jobs(name: str, comment: str) -> list[str]:
    """Ids of this user's queued or running jobs named `name` whose comment is `comment`, oldest first."""
    command = ["squeue", "-h", "-u", str(os.getuid()), "-n", name, "-o", "%i|%T|%k"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=CHECK_TIMEOUT_S * 2)
    except (OSError, subprocess.SubprocessError) as exc:
        raise UserError(f"--cells-on slurm: squeue did not answer: {exc}") from None
    if done.returncode != 0:
        raise UserError(f"--cells-on slurm: squeue: {_first(done.stderr)}")
    found = []
    for line in done.stdout.splitlines():
        job_id, _, rest = line.strip().partition("|")
        state, _, said = rest.partition("|")
        if said == comment and job_id.isdigit() and state.split()[0] not in ENDED:
            found.append(job_id)
    return sorted(found, key=int)


def _write_job_file(cell_folder: Path, job_id: str) -> None:
    """CELL/job.json, whole or not at all: the job's id, for a later sweep process and for people."""
    path = cell_folder / JOB_FILE
    temporary = path.with_suffix(".json.part")
    record = {"job_id": job_id, "name": job_name(cell_folder),
              "submitted_at": datetime.now(UTC).isoformat(timespec="seconds")}  # fmt: skip
    temporary.write_text(json.dumps(record) + "\n")
    os.replace(temporary, path)


def _read_job_file(cell_folder: Path) -> str | None:
    try:
        return str(json.loads((cell_folder / JOB_FILE).read_text())["job_id"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _scancel(job_id: str, *flags: str) -> bool:
    """True when scancel took it (False: the job had ended, or Slurm refused the signal now)."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        return subprocess.run(["scancel", *flags, job_id], capture_output=True, timeout=30).returncode == 0
    return False
