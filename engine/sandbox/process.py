"""The `process` sandbox: a subprocess in a fresh directory, with limits, and nothing left behind.

Each job gets a fresh temporary directory, a scrubbed environment and a small
supervisor process (`_supervisor.py`, run as ``python -I -S``) that starts the
command in its own process group with rlimits set (CPU, address space, file
size, no core files) and, when the machine allows it, inside a per-job `pids`
cgroup that caps the number of processes (see `cgroup.py`). The supervisor is
a child subreaper: double-forked daemons come back to it, and when the job's
main process ends, or the wall-clock limit hits, or the awaiting task is
cancelled, it SIGKILLs everything the job started and reaps it. The engine
also kills the job's cgroup directly, so containment does not hinge on the
supervisor alone.

Output is read in chunks as it comes and only the last `output_bytes` of each
stream are kept, so a job printing gigabytes neither blocks on a full pipe nor
fills the engine's memory. Everything is asyncio, so one event loop can keep
many jobs in flight.

This module holds the sandbox itself; what it shares with `bwrap` and `docker`
lives beside it: `jobenv` (environment allow-list, rlimits), `output` (pipes
read into bounded tails), `report` (how a job ended, its `SandboxResult`),
`workdir` (files in, answer out, removal), `killtree` (the engine's
last-resort kill); `launcher` is the supervisor server's client.

What this backend does NOT hold (use `bwrap` or `docker` for that): network
access, reading any file the engine's user can read (holdout data included, and
a job's `hidden` paths: an installed benchmark's tests; the engine's own
/proc/PID/environ too, so API keys kept out of the job's environment can still
be read from there),
writing outside the working directory, disk space (RLIMIT_FSIZE is per file),
total memory across processes (RLIMIT_AS is per process), and a job running as
root that deliberately moves itself out of its cgroup or kills its supervisor.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import tempfile
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .base import SandboxJob, SandboxResult, llm_env
from .cgroup import JobCgroup, PidsCgroups
from .jobenv import _job_env, _rlimit_spec
from .killtree import _hard_kill
from .launcher import Launcher, Supervised
from .output import _finish, _read_task, _Tail
from .report import _Ended, _Report, _result
from .workdir import _read_answer, _rmtree, _sweep_stale_workdirs, _write_files

if TYPE_CHECKING:
    from engine.lang.toolchain import Toolchain

__all__ = ["ProcessSandbox"]

log = logging.getLogger(__name__)

_WORKDIR_PREFIX = "clade-sbx-"


class _OnceLog:
    """Says each warning once per sandbox, not once per job."""

    def __init__(self) -> None:
        self._said: set[str] = set()

    def __call__(self, message: str) -> None:
        if message not in self._said:
            self._said.add(message)
            log.warning(message)


class ProcessSandbox:
    """Runs jobs as local subprocesses; see the module docstring for what it holds and not."""

    name = "process"

    def __init__(
        self,
        base_dir: str | os.PathLike[str] | None = None,
        *,
        use_cgroup: bool = True,
        kill_grace_s: float = 5.0,
        python: str | None = None,
        toolchains: Sequence[Toolchain] = (),
    ) -> None:
        """base_dir: where working directories are made (default: tempfile.gettempdir()).
        use_cgroup: try a per-job pids cgroup (falls back, and says so once, when unavailable).
        kill_grace_s: how long the supervisor gets to clean up before it is SIGKILLed itself.
        python: the task's own interpreter (`--task-python`), first on the jobs' PATH; the task's
        command names it (the engine's `sys.executable` otherwise).
        toolchains: the compilers found on the engine's PATH at run start (engine/lang/toolchain.py); the
        variables they need (rustup's RUSTUP_HOME, CARGO_HOME) go into every job's environment.
        """
        self.python = python
        self.toolchains = tuple(toolchains)
        self.base_dir = os.fspath(base_dir) if base_dir is not None else None
        self.use_cgroup = use_cgroup
        self.kill_grace_s = kill_grace_s
        self._cgroups = PidsCgroups()  # probed once, on the first job
        self._swept_bases: set[str] = set()
        self._warn_once = _OnceLog()
        self._launcher: Launcher | None = None  # made with the first job, once cgroups are probed

    def close(self) -> None:
        """Stop the supervisor server (it also stops by itself when the engine exits or dies)."""
        if self._launcher is not None:
            self._launcher.close()

    async def run(self, job: SandboxJob) -> SandboxResult:
        limits = job.limits
        self._remove_stale_workdirs()
        workdir = tempfile.mkdtemp(prefix=f"{_WORKDIR_PREFIX}{os.getpid()}-", dir=self.base_dir)
        cg: JobCgroup | None = None
        sup: Supervised | None = None
        status: asyncio.Task[bytes] | None = None
        readers: list[asyncio.Task[bytes]] = []
        try:
            _write_files(workdir, job.files)
            sup, cg, (stdout_fd, stderr_fd, status_fd) = self._launch(job, workdir)
            t0 = time.monotonic()
            out, err = _Tail(limits.output_bytes), _Tail(limits.output_bytes)
            status = _read_task(status_fd)
            readers = [_read_task(stdout_fd, out), _read_task(stderr_fd, err)]
            # EOF on the status pipe means the supervisor is gone, and with it (normally) the whole job.
            done, _ = await asyncio.wait({status}, timeout=limits.timeout_s)
            runtime = time.monotonic() - t0
            timed_out = not done
            if timed_out:
                await self._stop(sup, cg, status)
            report = self._job_report(_Report.parse(status.result()))
            if report.kind is None:  # the supervisor itself was killed: clean up after it
                _hard_kill(sup.pid, cg)
            for warning in report.warnings:
                self._warn_once(f"sandbox supervisor: {warning}")
            await _finish(readers, self._warn_once)
            answer, answer_reason = _read_answer(workdir, job.answer_file, job.answer_limit)
            return _result(job, _Ended(report, timed_out, runtime, out, err, answer, answer_reason))
        except BaseException:
            # Cancellation (Ctrl-C in the engine) or a bug: kill before the exception propagates.
            # A further cancellation meanwhile only makes the kill harder (see _stop); the
            # clean-up is bounded, and the original exception is re-raised after it.
            await self._abandon(sup, cg, status, readers)
            raise
        finally:
            if status is not None and not status.done():
                status.cancel()  # only after a second cancellation hard-killed the supervisor
            if sup is not None:
                sup.close()
            if cg is not None:
                cg.remove()
            _rmtree(workdir)

    def _launch(self, job: SandboxJob, workdir: str) -> tuple[Supervised, JobCgroup | None, tuple[int, int, int]]:
        """Start the job's supervisor; its cgroup, if any, and the read ends of its stdout, stderr and status."""
        launcher = self._get_launcher()
        argv, env = self._job_command(job, workdir)
        request = {
            "cwd": workdir,
            "env": env,
            "argv": argv,
            "processes": job.limits.processes,
            "rlimits": _rlimit_spec(job.limits, capped_by_cgroup=bool(launcher.cgroup_parent)),
        }
        pipes = [os.pipe() for _ in range(3)]  # stdout, stderr, status
        cg: JobCgroup | None = None
        try:
            sup = launcher.launch(request, (pipes[0][1], pipes[1][1], pipes[2][1]))
            if sup.cgroup:
                cg = JobCgroup(sup.cgroup)
            elif launcher.cgroup_parent:
                self._warn_once(
                    "process sandbox: could not create a job cgroup; such jobs run without a "
                    "pids cap (RLIMIT_NPROC only)"
                )
        except BaseException:
            for r, _ in pipes:
                os.close(r)
            raise
        finally:
            for _, w in pipes:
                os.close(w)
        return sup, cg, (pipes[0][0], pipes[1][0], pipes[2][0])

    async def _abandon(
        self,
        sup: Supervised | None,
        cg: JobCgroup | None,
        status: asyncio.Task[bytes] | None,
        readers: list[asyncio.Task[bytes]],
    ) -> None:
        """Kill a job left by an exception before that goes on (see `run`); a further cancellation is swallowed."""
        if sup is not None and status is not None and not status.done():
            try:
                await self._stop(sup, cg, status)
            except asyncio.CancelledError:
                pass
        if readers:
            try:
                await _finish(readers, self._warn_once)
            except asyncio.CancelledError:
                pass

    def _job_command(self, job: SandboxJob, workdir: str) -> tuple[list[str], dict[str, str]]:
        """The argv the supervisor starts (in `workdir`) and its environment.

        A hook for backends that run the same way but wrap the command (`bwrap`).
        """
        return list(job.command), {**_job_env(workdir, self.python), **self._toolchain_env(), **llm_env(job.llm)}

    def _toolchain_env(self) -> dict[str, str]:
        """What the run's compilers need in a job's environment (a job's HOME is its own folder)."""
        return {key: value for chain in self.toolchains for key, value in chain.env}

    def wrapped_command(self, job: SandboxJob, workdir: str) -> tuple[list[str], dict[str, str]]:
        """The argv and environment this backend would start `job` with in `workdir`, for a short synchronous
        step the caller runs itself (engine/lang/compile_check.py); no rlimits, no supervisor."""
        return self._job_command(job, workdir)

    def _job_report(self, report: _Report) -> _Report:
        """A hook for wrapping backends to translate how their wrapper reported the job's end."""
        return report

    def _remove_stale_workdirs(self) -> None:
        """Once per base directory: remove working directories of engines that died (named by their pid)."""
        base = self.base_dir or tempfile.gettempdir()
        if base in self._swept_bases:
            return
        self._swept_bases.add(base)
        _sweep_stale_workdirs(base, _WORKDIR_PREFIX)

    def _get_launcher(self) -> Launcher:
        """The supervisor server's client, made once cgroups are probed (it makes the job cgroups)."""
        if self._launcher is None:
            parent = self._cgroup_parent()
            self._launcher = Launcher(parent, self._cgroups.job_prefix if parent else "")
        return self._launcher

    def _cgroup_parent(self) -> str:
        """Where job cgroups go, or '' (said once, with its consequence) when there are none."""
        if not self.use_cgroup:
            return ""
        if not self._cgroups.available:
            if os.geteuid() == 0:
                consequence = (
                    "which the kernel does not enforce for root: a fork bomb is held only by the wall-clock timeout"
                )
            else:
                consequence = "counted over all of this user's processes"
            self._warn_once(
                f"process sandbox: pids cgroup unavailable ({self._cgroups.reason}); "
                f"process count capped by RLIMIT_NPROC only, {consequence}"
            )
            return ""
        return self._cgroups.parent

    async def _stop(self, sup: Supervised, cg: JobCgroup | None, status: asyncio.Task[bytes]) -> None:
        """Kill the job now and wait until the supervisor has reaped everything and exited.

        The cgroup is killed from here first, so that a stuck supervisor cannot
        keep the job alive; SIGTERM then makes the supervisor sweep the process
        group and any reparented orphans. If it has not exited after
        kill_grace_s, or if we are cancelled again meanwhile, everything is
        SIGKILLed from here.
        """
        if cg is not None:
            cg.kill()
        sup.signal(signal.SIGTERM)
        try:
            done, _ = await asyncio.wait({status}, timeout=self.kill_grace_s)
        except asyncio.CancelledError:
            _hard_kill(sup.pid, cg)
            raise
        if not done:
            log.warning(
                "sandbox supervisor %d did not exit %.1f s after SIGTERM; killing it",
                sup.pid,
                self.kill_grace_s,
            )
            _hard_kill(sup.pid, cg)
            await status  # EOF once the SIGKILLed supervisor is gone
