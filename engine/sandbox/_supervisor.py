"""Job supervisors for the `process` sandbox (a standalone script, not imported by the engine).

ProcessSandbox starts this once, as a long-lived server:
``python -I -S _supervisor.py --serve SOCKET_FD`` (see `serve`). For each job
the server forks a fresh copy of itself that becomes that job's supervisor;
forking a warm interpreter costs far less than starting one per job.

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

Protocol: the job runs in its own process group (pgid = its pid). When it exits,
or when its supervisor gets SIGTERM (engine timeout / cancellation) or the
server dies (PR_SET_PDEATHSIG; the server exits when the engine's end of the
socket closes, which the kernel does when the engine dies, even by SIGKILL),
everything left is SIGKILLed: the job's process group, every process in the
job's pids cgroup (forks frozen first with pids.max=0), and every child of the
supervisor, round after round until no child and no cgroup member is left.
Then one report is written to the job's status pipe: lines ``exit CODE CPU_S``
| ``signal SIGNUM CPU_S`` | ``execfail MESSAGE``, optionally ``stopped`` and
``warn MESSAGE`` lines.

Only the stdlib, and few modules (`_signal` is used instead of `signal`, whose
enum import costs ~5 ms).
"""

from __future__ import annotations

import _signal
import os
import resource
import socket
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


def _sweep(main_pid: int, main_exited: bool, cgroup_dir: str, monotonic: Callable[[], float]) -> bool:
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
            main_exited = os.waitid(os.P_PID, main_pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        if main_exited and not (_children(me) - {main_pid}) and not _cgroup_members(cgroup_dir):
            return True
        if monotonic() > end:
            return False
        _signal.sigtimedwait([SIGCHLD], 0.005)


def _recv(sock: socket.socket, max_fds: int) -> tuple[bytes, list[int]]:
    """One SOCK_SEQPACKET message and the fds that came with it (close-on-exec)."""
    msg, ancdata, _flags, _addr = sock.recvmsg(1 << 20, socket.CMSG_SPACE(max_fds * 4), socket.MSG_CMSG_CLOEXEC)
    fds: list[int] = []
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            usable = len(data) - len(data) % 4
            fds += [int.from_bytes(data[i : i + 4], sys.byteorder, signed=True) for i in range(0, usable, 4)]
    return msg, fds


def _send(sock: socket.socket, msg: bytes, fds: list[int]) -> None:
    anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, b"".join(fd.to_bytes(4, sys.byteorder) for fd in fds))]
    sock.sendmsg([msg], anc if fds else [])


def _await_job(main_pid: int) -> bool:
    """Wait until main ends (True) or a stop signal comes (False); orphans that end meanwhile are reaped."""
    while True:
        info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        if info is not None:
            if info.si_pid == main_pid:
                return True  # leave main unreaped until the sweep is done
            os.waitpid(info.si_pid, 0)  # an orphan that ended on its own
            continue
        if _signal.sigwaitinfo(WAITED).si_signo != SIGCHLD:
            return False


def _job_main(
    job_sock: socket.socket, check_w: int, cgroup_dir: str, supervisor: int, libc: ctypes.CDLL | None
) -> None:
    """The job's main process, forked ahead of its job: joins the cgroup, waits, then execs (never returns).

    Joining a cgroup v1 costs an RCU grace period (10-20 ms) when no other
    join happened just before; done here, ahead of time, it is off the job's
    critical path. Exec failures go to check_w, which exec closes.
    """
    try:
        os.setpgid(0, 0)
        if libc is not None:  # if the supervisor is SIGKILLed (the engine's last resort), main goes too
            libc.prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0)
        if os.getppid() != supervisor:
            os._exit(127)
        if cgroup_dir:
            try:
                fd = os.open(cgroup_dir + "/cgroup.procs", os.O_WRONLY)
                try:
                    os.write(fd, str(os.getpid()).encode())
                finally:
                    os.close(fd)
            except OSError as exc:
                os.write(check_w, f"W could not join pids cgroup {cgroup_dir}: {exc}\n".encode())
        msg, fds = _recv(job_sock, 2)
        if not msg:
            os._exit(127)  # the supervisor went away without a job
        import json

        request = json.loads(msg)
        devnull = os.open(os.devnull, os.O_RDONLY)
        for fd, target in ((devnull, 0), (fds[0], 1), (fds[1], 2)):
            os.dup2(fd, target)  # the copy is inheritable: the job writes there
            os.close(fd)
        os.chdir(request["cwd"])
        for res, soft, hard in _parse_rlimits(request["rlimits"]):
            resource.setrlimit(res, (soft, hard))
        # Python ignores SIGPIPE and SIGXFSZ; an ignored disposition survives exec.
        for sig in (_signal.SIGPIPE, _signal.SIGXFSZ):
            _signal.signal(sig, _signal.SIG_DFL)
        _signal.pthread_sigmask(_signal.SIG_SETMASK, ())
        argv = request["argv"]
        os.execvpe(argv[0], argv, request["env"])  # PATH looked up in the job's env
    except BaseException as exc:  # noqa: BLE001 -- must reach _exit whatever happens
        try:
            line = f"E {type(exc).__name__}: {exc}".replace("\n", " ")
            os.write(check_w, line.encode(errors="replace") + b"\n")
        finally:
            os._exit(127)


def _fork_main(ctl: socket.socket, cgroup_dir: str, libc: ctypes.CDLL | None) -> tuple[int, socket.socket, int]:
    """Fork the job's main process (see `_job_main`): its pid, the socket that hands it the request,
    and the read end of its exec check (EOF once main has exec'd or died)."""
    job_sock, main_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    check_r, check_w = os.pipe()  # close-on-exec: EOF once main has exec'd (or died)
    me = os.getpid()
    main_pid = os.fork()
    if main_pid == 0:
        ctl.close()
        main_sock.close()
        os.close(check_r)
        _job_main(job_sock, check_w, cgroup_dir, me, libc)
    job_sock.close()
    os.close(check_w)
    try:
        os.setpgid(main_pid, main_pid)  # also from here, so the group exists before we can signal it
    except OSError:
        pass  # main already did it
    return main_pid, main_sock, check_r


def _cap_pids(cgroup_dir: str, processes: int) -> str:
    """Set the job cgroup's pids.max; '' or a warning saying why it could not."""
    try:
        with open(cgroup_dir + "/pids.max", "w") as f:
            f.write(str(processes))
    except OSError as exc:
        return f"could not set pids.max in {cgroup_dir}: {exc}"
    return ""


def _exec_check(check_r: int) -> tuple[str, list[str]]:
    """What main wrote before its exec (read to EOF, then closed): the exec error ('' if none), its warnings."""
    exec_error, warnings = "", []
    chunks: list[bytes] = []
    while data := os.read(check_r, 65536):
        chunks.append(data)
    os.close(check_r)
    for line in b"".join(chunks).decode(errors="replace").splitlines():
        if line.startswith("E "):
            exec_error = line[2:]
        elif line.startswith("W "):
            warnings.append(line[2:])
    return exec_error, warnings


def _report(status: int, cpu: float, stopped: bool, swept: bool, exec_error: str, warnings: list[str]) -> bytes:
    """The job's report for its status pipe (the protocol in the module docstring)."""
    report = [f"warn {w}" for w in warnings if w]
    if not swept:
        report.append(f"warn processes survived {SWEEP_DEADLINE_S:g} s of SIGKILL sweeps")
    if stopped:
        report.insert(0, "stopped")
    if exec_error:
        report.append(f"execfail {exec_error}")
    elif os.WIFSIGNALED(status):
        report.append(f"signal {os.WTERMSIG(status)} {cpu:.3f}")
    else:
        report.append(f"exit {os.WEXITSTATUS(status)} {cpu:.3f}")
    return ("\n".join(report) + "\n").encode(errors="replace")


def _supervisor(ctl: socket.socket, server_pid: int, cgroup_dir: str, libc: ctypes.CDLL | None) -> int:
    """A job's supervisor, forked ahead of its job with the job's main process (see `_job_main`).

    Waits for the request (with the job's stdout, stderr and status fds) on
    `ctl`, hands it to main, supervises the job to its end, sweeps, reports.
    Returns the exit code.
    """
    from time import monotonic

    _signal.signal(SIGCHLD, _signal.SIG_DFL)
    _signal.pthread_sigmask(_signal.SIG_SETMASK, WAITED)  # taken with sigwaitinfo: no handler races
    os.setsid()  # its own session, off any terminal; the engine's last resort kills this session
    warnings = [_prctl(libc, PR_SET_CHILD_SUBREAPER, 1), _prctl(libc, PR_SET_PDEATHSIG, _signal.SIGTERM)]
    if os.getppid() != server_pid:  # the server died before PDEATHSIG was armed
        return 0
    main_pid, main_sock, check_r = _fork_main(ctl, cgroup_dir, libc)
    _signal.pthread_sigmask(_signal.SIG_UNBLOCK, WAITED)  # a stop signal while idle just ends us (and main)
    msg, fds = _recv(ctl, 3)
    ctl.close()
    _signal.pthread_sigmask(_signal.SIG_BLOCK, WAITED)
    if not msg or len(fds) != 3:
        return 0  # the server closed without a job for us; main dies with us (PDEATHSIG)
    import json

    request = json.loads(msg)
    out_fd, err_fd, status_fd = fds
    if cgroup_dir:
        warnings.append(_cap_pids(cgroup_dir, request["processes"]))
    _send(main_sock, msg, [out_fd, err_fd])
    os.close(out_fd)
    os.close(err_fd)
    main_sock.close()
    exec_error, main_warnings = _exec_check(check_r)
    warnings += main_warnings
    stopped = not _await_job(main_pid)
    swept = _sweep(main_pid, not stopped, cgroup_dir, monotonic)
    _, status, usage = os.wait4(main_pid, 0)
    os.write(status_fd, _report(status, usage.ru_utime + usage.ru_stime, stopped, swept, exec_error, warnings))
    return 0


class _Spare:
    """A supervisor and its job's main process, forked ahead of the next request."""

    def __init__(self, engine: socket.socket, cgroup_dir: str, libc: ctypes.CDLL | None) -> None:
        self.cgroup_dir = cgroup_dir
        self.ctl, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        server_pid = os.getpid()
        _signal.pthread_sigmask(_signal.SIG_BLOCK, {SIGCHLD})  # not reaped before its pidfd exists
        self.pid = os.fork()
        if self.pid == 0:
            code = 70
            try:
                engine.close()
                self.ctl.close()
                code = _supervisor(theirs, server_pid, cgroup_dir, libc)
            finally:  # a broken supervisor ends without a report; the engine cleans up after it
                os._exit(code)
        self.pidfd: int | None = None
        try:
            self.pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):
            pass  # old kernel: the engine signals by pid
        _signal.pthread_sigmask(_signal.SIG_UNBLOCK, {SIGCHLD})
        theirs.close()

    def discard(self) -> None:
        """Kill an unused spare (its main follows by PDEATHSIG) and remove its cgroup."""
        _kill(self.pid)
        self.ctl.close()
        if self.pidfd is not None:
            os.close(self.pidfd)
        if self.cgroup_dir:
            for _ in range(200):  # main leaves the cgroup as soon as it is dead
                try:
                    os.rmdir(self.cgroup_dir)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    _signal.sigtimedwait([], 0.005)


def _new_cgroup(parent: str, name: str) -> str:
    """A fresh pids cgroup for the next job, or '' (the engine is told, and says so) if it cannot be made."""
    if not parent:
        return ""
    path = os.path.join(parent, name)
    try:
        os.mkdir(path)
        return path
    except OSError:
        return ""


def _reap(*_: object) -> None:
    """SIGCHLD handler of the server: reap every child that ended (spent supervisors)."""
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _pass_on(spare: _Spare, msg: bytes, fds: list[int]) -> bool:
    """Send a request and its fds to the spare (our copies closed); False if the spare died."""
    try:
        _send(spare.ctl, msg, fds)
        return True
    except OSError:  # the spare died (killed from outside): the engine gets an error and retries
        return False
    finally:
        for fd in fds:
            os.close(fd)


def serve(sock_fd: int, cgroup_parent: str, cgroup_prefix: str) -> None:
    """The long-lived server: hands each job request to a spare supervisor, until the engine goes.

    A request is one SOCK_SEQPACKET message: JSON {cwd, env, argv, rlimits,
    processes} with three fds (the job's stdout, stderr and status pipe). The
    reply is JSON {pid, cgroup} with, where the kernel has pidfds, a pidfd of
    the job's supervisor, which the engine can signal without a pid-reuse
    race. The next spare is forked (and its main joins its fresh cgroup)
    while the job runs, so a request costs one message each way.
    """
    import json

    engine = socket.socket(fileno=sock_fd)
    libc = _libc()
    _signal.signal(SIGCHLD, _reap)
    spare: _Spare | None = None
    count = 0
    try:
        while True:
            if spare is None:
                count += 1
                spare = _Spare(engine, _new_cgroup(cgroup_parent, f"{cgroup_prefix}{count}"), libc)
            try:
                msg, fds = _recv(engine, 3)
            except ConnectionError:
                break
            if not msg:  # EOF: the engine closed us or died
                for fd in fds:
                    os.close(fd)
                break
            sent = _pass_on(spare, msg, fds)
            reply = {"pid": spare.pid, "cgroup": spare.cgroup_dir} if sent else {"error": "spare supervisor died"}
            pidfds = [spare.pidfd] if sent and spare.pidfd is not None else []
            if sent:
                spare.ctl.close()
                for fd in pidfds:
                    os.set_inheritable(fd, False)
            else:
                spare.discard()
            try:
                _send(engine, json.dumps(reply).encode(), pidfds)
            except OSError:
                break
            finally:
                for fd in pidfds:
                    os.close(fd)
                spare = None
    finally:
        if spare is not None:
            spare.discard()


if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[1] != "--serve":
        raise SystemExit("usage: _supervisor.py --serve SOCKET_FD CGROUP_PARENT CGROUP_PREFIX")
    serve(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    os._exit(0)  # skip interpreter finalization
