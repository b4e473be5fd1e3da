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
import resource
import shutil
import signal
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from .base import SandboxJob, SandboxLimits, SandboxResult, llm_env
from .cgroup import JobCgroup, PidsCgroups, pid_alive
from .launcher import Launcher, Supervised

__all__ = ["ProcessSandbox"]

log = logging.getLogger(__name__)

_CHUNK = 64 * 1024
_MB = 2**20
_PIPE_GRACE_S = 2.0  # after the job ended, how long open output pipes are waited for

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
    ) -> None:
        """base_dir: where working directories are made (default: tempfile.gettempdir()).
        use_cgroup: try a per-job pids cgroup (falls back, and says so once, when unavailable).
        kill_grace_s: how long the supervisor gets to clean up before it is SIGKILLed itself.
        """
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
        workdir = tempfile.mkdtemp(
            prefix=f"{_WORKDIR_PREFIX}{os.getpid()}-", dir=self.base_dir
        )
        cg: JobCgroup | None = None
        sup: Supervised | None = None
        status: asyncio.Task[bytes] | None = None
        readers: list[asyncio.Task[bytes]] = []
        try:
            _write_files(workdir, job.files)
            launcher = self._get_launcher()
            argv, env = self._job_command(job, workdir)
            request = {
                "cwd": workdir,
                "env": env,
                "argv": argv,
                "processes": limits.processes,
                "rlimits": _rlimit_spec(limits, capped_by_cgroup=bool(launcher.cgroup_parent)),
            }
            pipes = [os.pipe() for _ in range(3)]  # stdout, stderr, status
            try:
                sup = launcher.launch(request, (pipes[0][1], pipes[1][1], pipes[2][1]))
                if sup.cgroup:
                    cg = JobCgroup(sup.cgroup)
                elif launcher.cgroup_parent:
                    self._warn_once("process sandbox: could not create a job cgroup; such jobs run without a "
                                    "pids cap (RLIMIT_NPROC only)")
            except BaseException:
                for r, _ in pipes:
                    os.close(r)
                raise
            finally:
                for _, w in pipes:
                    os.close(w)
            t0 = time.monotonic()
            out, err = _Tail(limits.output_bytes), _Tail(limits.output_bytes)
            status = _read_task(pipes[2][0])
            readers = [_read_task(pipes[0][0], out), _read_task(pipes[1][0], err)]
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
            answer, answer_reason = _read_answer(
                workdir, job.answer_file, job.answer_limit
            )
            return _result(
                limits, job, report, timed_out, runtime, out, err, answer, answer_reason
            )
        except BaseException:
            # Cancellation (Ctrl-C in the engine) or a bug: kill before the exception propagates.
            # A further cancellation meanwhile only makes the kill harder (see _stop); the
            # clean-up is bounded, and the original exception is re-raised after it.
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
            raise
        finally:
            if status is not None and not status.done():
                status.cancel()  # only after a second cancellation hard-killed the supervisor
            if sup is not None:
                sup.close()
            if cg is not None:
                cg.remove()
            _rmtree(workdir)

    def _job_command(
        self, job: SandboxJob, workdir: str
    ) -> tuple[list[str], dict[str, str]]:
        """The argv the supervisor starts (in `workdir`) and its environment.

        A hook for backends that run the same way but wrap the command (`bwrap`).
        """
        return list(job.command), {**_job_env(workdir), **llm_env(job.llm)}

    def _job_report(self, report: _Report) -> _Report:
        """A hook for wrapping backends to translate how their wrapper reported the job's end."""
        return report

    def _remove_stale_workdirs(self) -> None:
        """Once per base directory: remove working directories of engines that died (named by their pid)."""
        base = self.base_dir or tempfile.gettempdir()
        if base in self._swept_bases:
            return
        self._swept_bases.add(base)
        try:
            names = os.listdir(base)
        except OSError:
            return
        for name in names:
            pid, dash, _ = name[len(_WORKDIR_PREFIX) :].partition("-")
            if (
                name.startswith(_WORKDIR_PREFIX)
                and dash
                and pid.isdigit()
                and not pid_alive(int(pid))
            ):
                _rmtree(os.path.join(base, name))

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
                consequence = "which the kernel does not enforce for root: a fork bomb is held only by the wall-clock timeout"
            else:
                consequence = "counted over all of this user's processes"
            self._warn_once(
                f"process sandbox: pids cgroup unavailable ({self._cgroups.reason}); "
                f"process count capped by RLIMIT_NPROC only, {consequence}"
            )
            return ""
        return self._cgroups.parent

    async def _stop(
        self, sup: Supervised, cg: JobCgroup | None, status: asyncio.Task[bytes]
    ) -> None:
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


def _read_task(fd: int, tail: _Tail | None = None) -> asyncio.Task[bytes]:
    """A task reading pipe `fd` to EOF without blocking the loop; it closes fd however it ends.

    With `tail`, chunks go there (only the last bytes are kept) and the task
    returns b''; without, it returns everything read (the status report).
    """
    task = asyncio.create_task(_read_until_eof(fd, tail))
    task.add_done_callback(lambda _: os.close(fd))  # runs even if cancelled unstarted
    return task


async def _read_until_eof(fd: int, tail: _Tail | None) -> bytes:
    loop = asyncio.get_running_loop()
    chunks: list[bytes] = []
    eof = loop.create_future()

    def readable() -> None:
        try:
            while data := os.read(fd, _CHUNK):
                if tail is None:
                    chunks.append(data)
                else:
                    tail.add(data)
        except BlockingIOError:
            return
        if not eof.done():
            eof.set_result(None)

    os.set_blocking(fd, False)
    loop.add_reader(fd, readable)
    try:
        await eof
    finally:
        loop.remove_reader(fd)
    return b"".join(chunks)


class _Tail:
    """The last `keep` bytes of a stream, whatever its length."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.buf = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        if self.keep <= 0:
            return
        if len(chunk) >= self.keep:
            self.buf = bytearray(chunk[-self.keep :])
            return
        self.buf += chunk
        excess = len(self.buf) - self.keep
        if excess > 0:
            del self.buf[:excess]

    def text(self) -> str:
        return self.buf.decode("utf-8", errors="replace")


async def _finish(readers: list[asyncio.Task[bytes]], warn: Callable[[str], None]) -> None:
    """Let the output readers reach EOF; stop waiting if a process escaped holding a pipe."""
    _, pending = await asyncio.wait(readers, timeout=_PIPE_GRACE_S)
    if pending:
        warn(
            "process sandbox: output pipes still open after the job ended; a process may have escaped"
        )
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)


@dataclass
class _Report:
    """What the supervisor wrote on its status pipe."""

    kind: str | None = (
        None  # 'exit' | 'signal' | 'execfail' | None (no report: supervisor died)
    )
    code: int = 0
    cpu_s: float = 0.0
    message: str = ""
    stopped: bool = False
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def parse(cls, raw: bytes) -> _Report:
        rep = cls()
        for line in raw.decode(errors="replace").splitlines():
            word, _, rest = line.partition(" ")
            if word == "stopped":
                rep.stopped = True
            elif word == "warn":
                rep.warnings.append(rest)
            elif word == "execfail":
                rep.kind, rep.message = word, rest
            elif word in ("exit", "signal"):
                code, _, cpu = rest.partition(" ")
                rep.kind, rep.code, rep.cpu_s = word, int(code), float(cpu or 0)
        return rep


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _result(
    limits: SandboxLimits,
    job: SandboxJob,
    report: _Report,
    timed_out: bool,
    runtime: float,
    out: _Tail,
    err: _Tail,
    answer: bytes | None,
    answer_reason: str,
) -> SandboxResult:
    returncode: int | None
    if report.kind == "exit":
        returncode = report.code
    elif report.kind == "signal":
        returncode = -report.code
    else:
        returncode = None
    if timed_out:
        status, reason = "timeout", f"timed out after {float(limits.timeout_s)} s"
    elif report.kind == "exit":
        status = "ok" if report.code == 0 else "error"
        reason = "" if report.code == 0 else f"exit code {report.code}"
    elif report.kind == "signal":
        status, reason = "killed", f"killed by {_signal_name(report.code)}"
        if report.code == signal.SIGXCPU or (
            report.code == signal.SIGKILL and report.cpu_s >= limits.cpu_s
        ):
            reason += f" (CPU time limit of {limits.cpu_s} s)"
        elif report.code == signal.SIGXFSZ:
            reason += f" (file size limit of {limits.file_size_mb} MB)"
    elif report.kind == "execfail":
        status, reason = (
            "error",
            f"could not start {job.command[0]!r}: {report.message}",
        )
    else:  # only a kill stops a supervisor before it reports
        status = "killed"
        reason = "sandbox supervisor ended without a report (killed); all job processes killed"
    if answer_reason:
        reason = f"{reason}; {answer_reason}" if reason else answer_reason
    return SandboxResult(
        status=status,
        returncode=returncode,
        answer=answer,
        stdout_tail=out.text(),
        stderr_tail=err.text(),
        runtime_s=runtime,
        reason=reason,
    )


def _write_files(workdir: str, files: Mapping[str, bytes]) -> None:
    for rel, content in files.items():  # names were checked by SandboxJob
        path = os.path.join(workdir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(content)


def _job_env(workdir: str) -> dict[str, str]:
    """An allow-listed environment: nothing of the engine's (API keys, PYTHONPATH, ...) leaks in.

    The engine's interpreter directory goes first on PATH so that `python`
    means the engine's interpreter (a pyenv shim would need PYENV_ROOT/HOME).
    """
    path = os.environ.get("PATH") or os.defpath
    exe_dir = os.path.dirname(sys.executable)
    if exe_dir and exe_dir not in path.split(os.pathsep):
        path = exe_dir + os.pathsep + path
    env = {
        "PATH": path,
        "HOME": workdir,
        "TMPDIR": workdir,
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    for key in ("LANG", "LC_ALL"):
        if os.environ.get(key):
            env[key] = os.environ[key]
    env.setdefault("LANG", "C.UTF-8")
    return env


def _rlimit_spec(limits: SandboxLimits, *, capped_by_cgroup: bool) -> str:
    """rlimits for the job as 'res:soft:hard,...', clamped to what this process may grant.

    The CPU hard limit is one second above the soft one: SIGXCPU first, then
    SIGKILL if the job catches or ignores SIGXCPU. RLIMIT_NPROC is set only
    without a cgroup and not as root: it counts all of the user's tasks (so
    the user's current count is added) and the kernel ignores it for root.
    """
    wanted = [
        (resource.RLIMIT_CPU, limits.cpu_s, limits.cpu_s + 1),
        (resource.RLIMIT_AS, limits.memory_mb * _MB, limits.memory_mb * _MB),
        (resource.RLIMIT_FSIZE, limits.file_size_mb * _MB, limits.file_size_mb * _MB),
        (resource.RLIMIT_CORE, 0, 0),
    ]
    if not capped_by_cgroup and os.getuid() != 0:
        n = _user_tasks(os.getuid()) + limits.processes
        wanted.append((resource.RLIMIT_NPROC, n, n))
    parts = []
    for res, soft, hard in wanted:
        _, cur_hard = resource.getrlimit(res)
        if cur_hard != resource.RLIM_INFINITY:
            hard = min(hard, cur_hard)
            soft = min(soft, hard)
        parts.append(f"{res}:{soft}:{hard}")
    return ",".join(parts)


def _user_tasks(uid: int) -> int:
    """Tasks (threads) owned by uid, what RLIMIT_NPROC is checked against."""
    n = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    n += len(os.listdir(f"/proc/{name}/task"))
            except OSError:
                continue
    return n


def _read_answer(
    workdir: str, answer_file: str, limit: int
) -> tuple[bytes | None, str]:
    """Read the answer back, refusing what is not a regular file inside the directory, or too big.

    Runs after every job process is dead, so nothing can swap the file between
    the checks and the read.
    """
    root = os.path.realpath(workdir)
    real = os.path.realpath(os.path.join(root, answer_file))
    if not real.startswith(root + os.sep):
        return None, f"answer file {answer_file!r} points outside the working directory"
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None, f"no answer file {answer_file!r}"
    except OSError as exc:
        return None, f"answer file {answer_file!r} unreadable: {exc.strerror}"
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None, f"answer file {answer_file!r} is not a regular file"
        if st.st_size > limit:
            return None, f"answer file larger than {limit} bytes ({st.st_size} bytes)"
        chunks, size = [], 0
        while size <= limit and (data := os.read(fd, min(_MB, limit + 1 - size))):
            chunks.append(data)
            size += len(data)
        if size > limit:
            return None, f"answer file larger than {limit} bytes"
        return b"".join(chunks), ""
    finally:
        os.close(fd)


def _children_of(pid: int) -> set[int]:
    kids: set[int] = set()
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return kids
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                kids.update(int(x) for x in f.read().split())
        except OSError:
            pass
    return kids


def _session_members(sid: int) -> set[int]:
    found: set[int] = set()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    raw = f.read()
            except OSError:
                continue
            fields = raw[raw.rfind(b")") + 2 :].split()
            if len(fields) > 3 and int(fields[3]) == sid:
                found.add(int(name))
    return found


def _hard_kill(sup_pid: int, cg: JobCgroup | None) -> None:
    """Last resort, from the engine: SIGKILL the job's cgroup, the supervisor's tree and its session.

    Orphans of a SIGKILLed supervisor go to init, which reaps them.
    """
    if cg is not None:
        cg.kill()
    victims, frontier = {sup_pid}, [sup_pid]
    while frontier:
        kids = _children_of(frontier.pop()) - victims
        victims |= kids
        frontier.extend(kids)
    victims |= _session_members(
        sup_pid
    )  # the supervisor leads the session its job was started in
    for pid in victims:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _rmtree(path: str) -> None:
    """Remove a working directory even if the job made parts of it unreadable or read-only."""
    shutil.rmtree(path, ignore_errors=True)
    if not os.path.lexists(path):
        return
    # Second pass: make every directory (never a symlink's target) rwx for us, top-down, then retry.
    if not os.path.islink(path):
        os.chmod(path, 0o700)
    for dirpath, dirnames, _ in os.walk(path):
        for d in dirnames:
            full = os.path.join(dirpath, d)
            if not os.path.islink(full):
                try:
                    os.chmod(full, 0o700)
                except OSError:
                    pass

    def report(func, p, exc_info):  # type: ignore[no-untyped-def]
        log.warning("could not remove %s: %s", p, exc_info[1])

    shutil.rmtree(path, onerror=report)
