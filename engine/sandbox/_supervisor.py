"""Per-job supervisor for the `process` sandbox (a standalone script, not imported by the engine).

Started by ProcessSandbox as ``python -I -S _supervisor.py STATUS_FD ENGINE_PID CGROUP_DIR RLIMITS -- ARGV...``.

Why a supervisor process instead of spawning the job directly from the engine:
- It makes itself a *child subreaper* (prctl PR_SET_CHILD_SUBREAPER), so every
  orphan of the job (a double-forked, setsid'ed daemon included) is reparented
  to it rather than to init. Everything it can wait for belongs to this job, so
  it can kill and reap all of it with plain waitpid: no zombie is left for an
  init that may reap late (PID 1 of this VM does), and the engine itself never
  becomes a subreaper for unrelated processes (git, Ray, ...).
- Rlimits and the cgroup join happen in a fork of this small single-threaded
  process, not in a `preexec_fn` inside the multi-threaded engine, where
  running Python code between fork and exec can deadlock.
- The engine keeps spawning with vfork/posix_spawn speed (no preexec_fn).

Protocol: the job runs in its own process group (pgid = its pid). When it exits,
or when this supervisor gets SIGTERM (engine timeout / cancellation) or its
parent dies (PR_SET_PDEATHSIG), everything left is SIGKILLed: the job's process
group, every process in the job's pids cgroup (forks frozen first with
pids.max=0), and every child of this supervisor, round after round until no
child and no cgroup member is left. Then one report is written to STATUS_FD:
lines ``exit CODE CPU_S`` | ``signal SIGNUM CPU_S`` | ``execfail MESSAGE``,
optionally ``stopped`` and ``warn MESSAGE`` lines. It exits 0 unless it broke.

Only the stdlib, and few modules: startup time is per-job overhead (`_signal`
is used instead of `signal`, whose enum import costs ~5 ms).
"""

from __future__ import annotations

import _signal
import os
import resource
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ctypes
    from collections.abc import Callable

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
SIGKILL = _signal.SIGKILL
SIGCHLD = _signal.SIGCHLD
WAITED = {SIGCHLD, _signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP}
SWEEP_DEADLINE_S = 10.0


def _libc() -> ctypes.CDLL | None:
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True)
    except (ImportError, OSError):
        return None


def _prctl(libc: ctypes.CDLL | None, option: int, arg: int) -> str:
    """Return '' or a warning saying why prctl(option, arg) failed."""
    if libc is None:
        return f"prctl({option}, {arg}) unavailable: no ctypes"
    if libc.prctl(option, arg, 0, 0, 0) == 0:
        return ""
    import ctypes

    return f"prctl({option}, {arg}) failed: {os.strerror(ctypes.get_errno())}"


def _parse_rlimits(spec: str) -> list[tuple[int, int, int]]:
    out = []
    for item in filter(None, spec.split(",")):
        res, soft, hard = (int(x) for x in item.split(":"))
        out.append((res, soft, hard))
    return out


def _spawn(
    command: list[str],
    rlimits: list[tuple[int, int, int]],
    cgroup_dir: str,
    libc: ctypes.CDLL | None,
) -> tuple[int, str, list[str]]:
    """Fork and exec the job; return (pid, exec_error or '', warnings)."""
    r, w = os.pipe()  # close-on-exec: EOF on successful exec
    parent = os.getpid()
    pid = os.fork()
    if (
        pid == 0
    ):  # child: single-threaded fork of a tiny process, safe to run Python here
        try:
            os.close(r)
            os.setpgid(0, 0)
            # If the supervisor is SIGKILLed (engine's last resort), its job's main process goes too.
            if libc is not None:
                libc.prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0)
            if os.getppid() != parent:
                os._exit(127)
            if cgroup_dir:
                try:
                    fd = os.open(cgroup_dir + "/cgroup.procs", os.O_WRONLY)
                    try:
                        os.write(fd, str(os.getpid()).encode())
                    finally:
                        os.close(fd)
                except OSError as exc:
                    os.write(
                        w,
                        f"W could not join pids cgroup {cgroup_dir}: {exc}\n".encode(),
                    )
            for res, soft, hard in rlimits:
                resource.setrlimit(res, (soft, hard))
            # Python ignores SIGPIPE and SIGXFSZ; an ignored disposition survives exec.
            for sig in (_signal.SIGPIPE, _signal.SIGXFSZ):
                _signal.signal(sig, _signal.SIG_DFL)
            _signal.pthread_sigmask(_signal.SIG_SETMASK, ())
            os.execvp(command[0], command)
        except BaseException as exc:  # noqa: BLE001 -- must reach _exit whatever happens
            try:
                msg = f"E {type(exc).__name__}: {exc}".replace("\n", " ")
                os.write(w, msg.encode(errors="replace") + b"\n")
            finally:
                os._exit(127)
    os.close(w)
    try:
        os.setpgid(
            pid, pid
        )  # also from the parent, so the group exists before we can signal it
    except OSError:
        pass  # the child already did it, or already exec'd
    chunks: list[bytes] = []
    while True:
        data = os.read(r, 65536)
        if not data:
            break
        chunks.append(data)
    os.close(r)
    exec_error, warnings = "", []  # type: tuple[str, list[str]]
    for line in b"".join(chunks).decode(errors="replace").splitlines():
        if line.startswith("E "):
            exec_error = line[2:]
        elif line.startswith("W "):
            warnings.append(line[2:])
    return pid, exec_error, warnings


def _children(me: int) -> set[int]:
    """Pids of this process's children (zombies included)."""
    try:
        with open(f"/proc/{me}/task/{me}/children") as f:
            return {int(x) for x in f.read().split()}
    except FileNotFoundError:  # kernel without CONFIG_PROC_CHILDREN: scan /proc
        pass
    kids = set()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            fields = stat[stat.rfind(b")") + 2 :].split()
            if len(fields) > 1 and int(fields[1]) == me:
                kids.add(int(name))
    return kids


def _cgroup_members(cgroup_dir: str) -> set[int]:
    if not cgroup_dir:
        return set()
    try:
        with open(cgroup_dir + "/cgroup.procs") as f:
            return {int(x) for x in f.read().split()}
    except OSError:
        return set()


def _kill(pid: int) -> None:
    try:
        os.kill(pid, SIGKILL)
    except OSError:
        pass


def _sweep(
    main_pid: int, main_exited: bool, cgroup_dir: str, monotonic: Callable[[], float]
) -> bool:
    """Kill everything the job left and reap it all except main_pid (reaped by the caller).

    Main stays an unreaped zombie until the end, so its pid, which is also the
    job's process-group id, cannot be reused while we signal that group.

    Done when main is dead and this supervisor has no other child: every
    living descendant has a chain of parents up to one of our children (an
    orphan is reparented to us, the subreaper, as its parent exits), and main,
    a zombie, has none left. Without a cgroup, processes deeper down in other
    process groups are killed round by round as they are reparented to us.
    Returns False if something survived SWEEP_DEADLINE_S.
    """
    if cgroup_dir:
        try:
            with open(cgroup_dir + "/pids.max", "w") as f:
                f.write("0")  # no more forks in the job while we kill it
        except OSError:
            pass
    me = os.getpid()
    end = monotonic() + SWEEP_DEADLINE_S
    while True:
        try:
            os.killpg(main_pid, SIGKILL)
        except OSError:
            pass
        if not main_exited:
            _kill(main_pid)  # in case it left its process group
        kids = _children(me) - {main_pid}
        for pid in kids | _cgroup_members(cgroup_dir):
            _kill(pid)
        for pid in kids:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
        if not main_exited:
            main_exited = (
                os.waitid(os.P_PID, main_pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
                is not None
            )
        if (
            main_exited
            and not (_children(me) - {main_pid})
            and not _cgroup_members(cgroup_dir)
        ):
            return True
        if monotonic() > end:
            return False
        _signal.sigtimedwait([SIGCHLD], 0.005)


def main(argv: list[str]) -> int:
    from time import monotonic

    status_fd, engine_pid, cgroup_dir, rlimit_spec = (
        int(argv[1]),
        int(argv[2]),
        argv[3],
        argv[4],
    )
    if argv[5] != "--" or len(argv) < 7:
        raise SystemExit(
            "usage: _supervisor.py STATUS_FD ENGINE_PID CGROUP_DIR RLIMITS -- ARGV..."
        )
    command = argv[6:]
    os.set_inheritable(status_fd, False)  # the job must not hold (or forge) the report
    _signal.pthread_sigmask(
        _signal.SIG_BLOCK, WAITED
    )  # taken with sigwaitinfo: no handler races
    libc = _libc()
    report = [
        _prctl(libc, PR_SET_CHILD_SUBREAPER, 1),
        _prctl(libc, PR_SET_PDEATHSIG, _signal.SIGTERM),
    ]
    report = [f"warn {w}" for w in report if w]
    stopped = os.getppid() != engine_pid  # the engine died before PDEATHSIG was armed
    if stopped:
        os.write(status_fd, b"stopped\n")
        return 0

    main_pid, exec_error, warnings = _spawn(
        command, _parse_rlimits(rlimit_spec), cgroup_dir, libc
    )
    report += [f"warn {w}" for w in warnings]
    while True:
        info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        if info is not None:
            if info.si_pid == main_pid:
                break  # leave main unreaped until the sweep is done
            os.waitpid(info.si_pid, 0)  # an orphan that ended on its own
            continue
        if _signal.sigwaitinfo(WAITED).si_signo != SIGCHLD:
            stopped = True
            break
    if not _sweep(main_pid, not stopped, cgroup_dir, monotonic):
        report.append(
            f"warn processes survived {SWEEP_DEADLINE_S:g} s of SIGKILL sweeps"
        )
    _, status, usage = os.wait4(main_pid, 0)
    cpu = usage.ru_utime + usage.ru_stime
    if stopped:
        report.insert(0, "stopped")
    if exec_error:
        report.append(f"execfail {exec_error}")
    elif os.WIFSIGNALED(status):
        report.append(f"signal {os.WTERMSIG(status)} {cpu:.3f}")
    else:
        report.append(f"exit {os.WEXITSTATUS(status)} {cpu:.3f}")
    os.write(status_fd, ("\n".join(report) + "\n").encode(errors="replace"))
    return 0


if __name__ == "__main__":
    code = main(sys.argv)
    os._exit(
        code
    )  # everything went through os.write; skip interpreter finalization (~ms per job)
