"""The Slurm executor: every sandboxed evaluation is a Slurm job (`--executor slurm`, the `[slurm]` extra).

`SlurmSandbox` is a Sandbox like the others, as `RaySandbox` is: `run(job)` submits one Slurm job through
submitit and awaits its result; the scheduler and `engine/loop/evaluation.py` do not know it is there. The
job builds the inner backend (`process`, `bwrap`, `docker`, `auto`) on the node with `make_sandbox` and runs
the SandboxJob there. submitit pickles the job's function and its arguments (the SandboxJob, with the
agent's files in it) into the executor's folder, `<run folder>/slurm/<job id>/`, and the node writes the
pickled SandboxResult back there: that folder must be on a filesystem the nodes share with the engine's
machine, as must the engine's checkout and Python (the job runs `<the engine's python> -m
submitit.core._submit` with the checkout on PYTHONPATH). Grading and every archive write stay in the engine
process, which alone holds the archive: it records what `run()` returns, once.

At most `workers` jobs are in flight (the scheduler runs that many evaluations at once); each asks for one
task and one CPU (`--slurm-option cpus-per-task=N`, `mem=...` and any other sbatch option add to or
override that), in `--slurm-partition` for `--slurm-time`.

Why submitit and not plain sbatch: it writes the batch script, moves the arguments and the result (pickles,
with the exception and its traceback when the function raised), and names each job's files by its id - the
parts that are easy to get subtly wrong. What it does not do well here is notice a job that died: it asks
`sacct`, which answers only where accounting (slurmdbd) runs, and its own polling blocks and backs off to
ten minutes. So the state of jobs in flight is read here, with one `squeue` for all of them per poll
(squeue answers on every cluster), and submitit's blocking calls are made only once the result file exists.

Failures:
- A job that Slurm cancels (`scancel`), preempts without requeueing, times out, or loses with its node
  ends without a result file: Slurm's SIGTERM cancels the evaluation on the node, which exits without
  one. (Where Slurm's signal reached the agent first and a failed result was written anyway, the job's
  final state, CANCELLED rather than COMPLETED, gives it away.)
  It is submitted again, up to `max_retries` more times; the engine records only
  what `run()` returns, once, so nothing is counted twice. A job Slurm requeues itself (preemption with
  requeue) keeps its id and is simply waited for. If every attempt is lost, `run()` returns an 'error'
  result saying so rather than stopping the search.
- An exception raised by the function on the node (a broken node environment, a bug) is not retried: it
  is raised here as RuntimeError, like a failure of a local sandbox.
- Cancelling `run()` (Ctrl-C, SIGTERM, the scheduler abandoning work) scancels the job, then the
  CancelledError goes on; `close()` scancels whatever is still in flight.
- A cluster that does not answer `sinfo`, or lacks the partition named, raises RuntimeError (one line) at
  construction. sbatch refusing a job (a bad option, the controller gone mid-run) raises UserError (one
  line): the run stops, and a resume goes on.

submitit is imported lazily: importing `engine.sandbox` or this module does not import it
(`slurm_available()` says whether the executor can run here).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Self

from .base import Sandbox, SandboxJob, SandboxResult
from .on_node import check_inner, local_python, run_here
from .slurm_options import parse_slurm_options

__all__ = ["MAX_RETRIES", "SlurmSandbox", "parse_slurm_options", "slurm_available"]

log = logging.getLogger(__name__)

MAX_RETRIES = 3  # attempts after the first when Slurm cancels, preempts or loses a job
POLL_S = 0.25  # how often the states of the jobs in flight are read (one squeue for all of them)
# states in which a job will not produce a result any more (squeue's long names)
ENDED = frozenset(
    {"BOOT_FAIL", "CANCELLED", "COMPLETED", "DEADLINE", "FAILED", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED",
     "REVOKED", "SPECIAL_EXIT", "TIMEOUT"}
)  # fmt: skip
CHECK_TIMEOUT_S = 20.0  # for sinfo at start (Slurm's commands retry a missing controller for a minute)
RESULT_GRACE_S = 5.0  # after a job completes or leaves squeue, how long its result file may take to appear (NFS)

_ENGINE_ROOT = Path(__file__).resolve().parents[2]  # the folder that holds the `engine` package


def install_hint() -> str:
    from engine.install import install_extra

    return f"submitit not installed: {install_extra('slurm')}"


def slurm_available() -> tuple[bool, str]:
    """(can the Slurm executor run here, one line why / which version)."""
    try:
        import submitit
    except ImportError:
        return False, install_hint()
    except Exception as exc:  # noqa: BLE001 - a broken install: say what broke, on one line
        return False, f"submitit cannot be imported: {_one_line(exc)}"
    for tool in ("sbatch", "squeue", "scancel"):
        if shutil.which(tool) is None:
            return False, f"{tool} not found on PATH (this machine is not a Slurm submit host)"
    return True, f"submitit {getattr(submitit, '__version__', '?')}"


class SlurmSandbox:
    """Runs each job as a Slurm job on the inner sandbox backend `inner`; see the module docstring."""

    def __init__(
        self,
        inner: str,
        *,
        folder: str | os.PathLike[str],
        partition: str | None = None,
        time_limit: str | None = None,
        options: Mapping[str, str] | None = None,
        inner_options: Mapping[str, Any] | None = None,
        max_retries: int = MAX_RETRIES,
        poll_s: float = POLL_S,
    ) -> None:
        """inner: the backend run on the nodes (a name `make_sandbox` knows).
        folder: where the jobs' files go (on a filesystem the nodes share); made if missing.
        partition, time_limit: sbatch's --partition and --time (None: the cluster's defaults).
        options: more sbatch options, {name: value} (parse_slurm_options).
        inner_options: keyword arguments of `make_sandbox(inner, ...)` on the nodes.
        max_retries: how many more times a job is submitted when Slurm cancels, preempts or loses it.

        RuntimeError (one line) when submitit or Slurm's commands are missing, or the cluster does not answer.
        """
        ok, why = slurm_available()
        if not ok:
            raise RuntimeError(why)
        check_inner(inner, max_retries)
        import submitit

        _check_cluster(partition)
        self.inner = inner
        self.name = f"slurm/{inner}"
        self.folder = Path(folder).resolve()
        self.folder.mkdir(parents=True, exist_ok=True)
        self.inner_options = dict(inner_options or {})
        self.max_retries = max_retries
        self.poll_s = poll_s
        # one task: the batch script runs the job's Python itself (no srun step to launch: ~0.3 s less a job)
        params: dict[str, Any] = {
            "ntasks_per_node": 1, "cpus_per_task": 1, "nodes": 1, "job_name": "clade-eval", "use_srun": False,
        }  # fmt: skip
        extra = dict(options or {})
        for key in ("ntasks_per_node", "cpus_per_task", "nodes", "job_name", "partition", "time"):
            if key in extra:
                params[key] = extra.pop(key)
        if partition:
            params["partition"] = partition
        if time_limit:
            params["time"] = time_limit
        _check_options({k: v for k, v in params.items() if k != "use_srun"} | extra)
        path = os.pathsep.join(p for p in (str(_ENGINE_ROOT), os.environ.get("PYTHONPATH", "")) if p)
        self._executor = submitit.SlurmExecutor(folder=self.folder / "%j", python=sys.executable, max_num_timeout=0)
        self._executor.update_parameters(
            **params, additional_parameters=extra, setup=[f"export PYTHONPATH={_quote(path)}"]
        )
        self._in_flight: set[str] = set()
        self._states: dict[str, str] = {}
        self._read_at = 0.0
        self._locks: tuple[asyncio.AbstractEventLoop, asyncio.Lock, asyncio.Lock] | None = None

    async def run(self, job: SandboxJob) -> SandboxResult:
        clock = time.monotonic()
        lost: list[str] = []
        for _attempt in range(self.max_retries + 1):
            submitted = await self._submit(job)
            job_id = str(submitted.job_id)
            try:
                ended = await self._wait(submitted)
                if ended is None:
                    result = await asyncio.to_thread(self._outcome, submitted)
                    if result.ok:
                        return result
                    # a failure may be Slurm's doing (its SIGTERM reached the agent before this job's Python):
                    # it counts only if the job itself ended as it should
                    ended = await self._final_state(job_id)
                    if ended in (None, "COMPLETED"):
                        return result
            except asyncio.CancelledError:
                _scancel([job_id])
                raise
            finally:
                self._in_flight.discard(job_id)
            lost.append(f"{job_id} {ended}")
            log.info("slurm job %s ended %s without a result: submitting the evaluation again", job_id, ended)
        return SandboxResult(
            status="error", returncode=None, answer=None, stdout_tail="", stderr_tail="",
            runtime_s=time.monotonic() - clock,
            reason=f"the Slurm job running this evaluation ended without a result on each of "
                   f"{self.max_retries + 1} attempts ({', '.join(lost)})"[:500],
        )  # fmt: skip

    def _lock(self, which: int) -> asyncio.Lock:
        """The submit (0) or poll (1) lock of the running event loop (a caller may run several in turn)."""
        loop = asyncio.get_running_loop()
        if self._locks is None or self._locks[0] is not loop:
            self._locks = (loop, asyncio.Lock(), asyncio.Lock())
        return self._locks[2] if which else self._locks[1]

    async def _submit(self, job: SandboxJob) -> Any:
        async with self._lock(0):  # one sbatch at a time: submitit's executor is not made for threads
            try:
                submitted = await asyncio.to_thread(
                    self._executor.submit, _run_job, job, self.inner, self.inner_options
                )
            except Exception as exc:  # noqa: BLE001 - sbatch refused or is missing: one line, the run stops
                from engine.errors import UserError  # the run stops with one line, and can be resumed

                raise UserError(f"--executor slurm: sbatch refused an evaluation's job: {_sbatch_said(exc)}") from None
        self._in_flight.add(str(submitted.job_id))
        return submitted

    async def _wait(self, submitted: Any) -> str | None:
        """None once the job's result file exists; the state it ended in when it ended without one."""
        job_id = str(submitted.job_id)
        result = submitted.paths.result_pickle
        ended_at: float | None = None
        while True:
            if result.exists():
                return None
            state = await self._state(job_id)
            if state is not None and state not in ENDED:
                ended_at = None
            elif ended_at is None:
                ended_at = time.monotonic()
            elif time.monotonic() - ended_at > (RESULT_GRACE_S if state in (None, "COMPLETED") else 2 * self.poll_s):
                return state or "(gone from squeue)"
            await asyncio.sleep(self.poll_s)

    async def _final_state(self, job_id: str) -> str | None:
        """The state the job ended in (None: squeue no longer lists it), waiting for it to end."""
        deadline = time.monotonic() + RESULT_GRACE_S + 30
        while time.monotonic() < deadline:
            state = await self._state(job_id)
            if state is None or state in ENDED:
                return state
            await asyncio.sleep(self.poll_s)
        return None

    async def _state(self, job_id: str) -> str | None:
        """The job's state from one squeue for all jobs in flight, read at most every poll_s; None: not listed."""
        async with self._lock(1):
            if time.monotonic() - self._read_at >= self.poll_s:
                self._states = await asyncio.to_thread(_squeue, sorted(self._in_flight))
                self._read_at = time.monotonic()
            return self._states.get(job_id)

    def _outcome(self, submitted: Any) -> SandboxResult:
        """The SandboxResult the node wrote (submitit's result file); RuntimeError if the function raised."""
        import submitit

        try:
            result = submitted.result()
        except submitit.core.utils.FailedJobError as exc:
            raise RuntimeError(f"the Slurm job {submitted.job_id} failed: {_last_line(exc)}") from None
        if not isinstance(result, SandboxResult):
            raise RuntimeError(f"the Slurm job {submitted.job_id} returned {type(result).__name__}, not a result")
        return result

    def cluster_said(self) -> str:
        """'Slurm partition debug (1 node, 2 CPUs)': what sinfo says now, for the run's header."""
        partition = self._executor.parameters.get("partition")
        command = ["sinfo", "-h", "-o", "%D %C"] + (["-p", str(partition)] if partition else [])
        try:
            out = subprocess.run(command, capture_output=True, text=True, timeout=10, check=True).stdout.split()
            nodes, cpus = int(out[0]), out[1].split("/")[-1]
        except (OSError, subprocess.SubprocessError, ValueError, IndexError):
            return f"Slurm partition {partition or '(default)'}"
        return f"Slurm partition {partition or '(default)'} ({nodes} node{'s' if nodes != 1 else ''}, {cpus} CPUs)"

    def close(self) -> None:
        """scancel the jobs still in flight (an abandoned run leaves nothing queued)."""
        if self._in_flight:
            _scancel(sorted(self._in_flight))
            self._in_flight.clear()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_cluster(partition: str | None) -> None:
    """RuntimeError (one line) unless the cluster answers sinfo (and has `partition`, when one is named)."""
    command = ["sinfo", "-h", "-o", "%P"] + (["-p", partition] if partition else [])
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=CHECK_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        said = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else exc.stderr or ""
        raise RuntimeError(
            f"the Slurm cluster did not answer sinfo within {CHECK_TIMEOUT_S:g} s: {_first(said)}"
        ) from None
    except OSError as exc:
        raise RuntimeError(f"cannot run sinfo: {exc}") from None
    if done.returncode != 0:
        raise RuntimeError(f"the Slurm cluster does not answer: {_first(done.stderr)}")
    if partition and not done.stdout.strip():
        raise RuntimeError(f"the Slurm cluster has no partition {partition!r}")


def _check_options(options: Mapping[str, Any]) -> None:
    """RuntimeError (sbatch's own line) unless `sbatch --test-only` takes the jobs' options (a partition, a
    time limit, a constraint, a qos the cluster knows): a bad option stops the run before it starts."""
    flags = [f"--{key.replace('_', '-')}={value}" for key, value in options.items()]
    command = ["sbatch", "--test-only", "--output=/dev/null", *flags, "--wrap=true"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=CHECK_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError) as exc:
        raise RuntimeError(f"sbatch --test-only: {_one_line(exc)}") from None
    if done.returncode != 0:
        errors = [line.strip() for line in done.stderr.splitlines() if "error" in line.lower()]
        said = errors[-1][:300] if errors else _first(done.stderr)
        raise RuntimeError(f"sbatch refuses the jobs' options ({' '.join(flags)}): {said}")


def _first(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0][:300] if lines else "(nothing said)"


def _sbatch_said(exc: BaseException) -> str:
    """sbatch's own error line (submitit wraps it in a longer message), else the exception's first line."""
    lines = [line.strip() for line in str(exc).splitlines() if "error:" in line]
    return lines[-1][:300] if lines else _one_line(exc)


def _squeue(job_ids: list[str]) -> dict[str, str]:
    """{job id: state} of those jobs squeue still lists; a failed squeue says nothing (empty, as if all gone
    is wrong: so the jobs keep their last state)."""
    if not job_ids:
        return {}
    command = ["squeue", "-h", "-t", "all", "-o", "%i %T", "-j", ",".join(job_ids)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return {job: "UNKNOWN" for job in job_ids}
    if done.returncode != 0 and "Invalid job id" not in done.stderr:
        return {job: "UNKNOWN" for job in job_ids}  # slurmctld busy or restarting: not a lost job
    states = {}
    for line in done.stdout.splitlines():
        job, _, state = line.strip().partition(" ")
        if job:
            states[job] = state.strip()
    return states


def _scancel(job_ids: list[str]) -> None:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(["scancel", *job_ids], capture_output=True, timeout=30)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _one_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0][:300] if lines else type(exc).__name__


def _last_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[-1][:300] if lines else type(exc).__name__


# ----- the node side: the job --------------------------------------------------


def _run_job(job: SandboxJob, inner: str, options: Mapping[str, Any]) -> SandboxResult:
    """The Slurm job: run `job` on this node's `inner` sandbox and return how it ended.

    When Slurm ends the job (scancel, preemption, the time limit: SIGTERM to every process of the job), the
    evaluation is cancelled, its sandbox cleans up, and this process exits without a result: the job was
    lost, not the evaluation, which the engine submits again. (Returning the 'killed' result instead would
    record Slurm's decision as the agent's failure.)"""
    import dataclasses

    from . import make_sandbox

    sandbox: Sandbox = make_sandbox(inner, **options)
    result = asyncio.run(_unless_ended(sandbox, local_python(job)))
    if result is None:
        sys.stdout.flush()
        os._exit(143)  # no result file: the engine sees a job Slurm ended, and runs the evaluation again
    where = f"slurm:{os.environ.get('SLURM_JOB_ID', '?')}@{os.environ.get('SLURMD_NODENAME', '?')}"
    return dataclasses.replace(result, worker=f"{where}/{sandbox.name}")


async def _unless_ended(sandbox: Sandbox, job: SandboxJob) -> SandboxResult | None:
    """The job's result; None when SIGTERM came first (the evaluation cancelled, its sandbox cleaned up)."""
    import signal

    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    ended: list[int] = []

    def on_sigterm() -> None:
        ended.append(signal.SIGTERM)
        if task is not None:
            task.cancel()

    loop.add_signal_handler(signal.SIGTERM, on_sigterm)
    try:
        return await run_here(sandbox, job)
    except asyncio.CancelledError:
        if ended:
            return None
        raise
