"""The engine's end of the long-lived supervisor server (`_supervisor.py --serve`).

One server per ProcessSandbox, started on the first job and restarted if it
died. A launch sends the job's description and its three pipe ends over a
SOCK_SEQPACKET socket pair and gets back the pid (and, where the kernel has
them, a pidfd) of the job's supervisor, forked ahead of time, and the pids
cgroup its job runs in. The server exits when this end closes, which the
kernel also does when the engine dies.
"""

from __future__ import annotations

import array
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

SUPERVISOR = str(Path(__file__).with_name("_supervisor.py"))
_REPLY_TIMEOUT_S = 10.0  # a fork answers in a millisecond; this only catches a wedged server


class LaunchError(RuntimeError):
    """The supervisor server could not start a job's supervisor."""


@dataclass
class Supervised:
    """A job's supervisor process, as the engine may signal it."""

    pid: int
    pidfd: int | None = None
    cgroup: str = ""  # the job's pids cgroup directory, '' when it runs without one

    def signal(self, signum: int) -> None:
        """Send signum; a supervisor already gone is not an error."""
        try:
            if self.pidfd is not None:
                signal.pidfd_send_signal(self.pidfd, signum)
            else:
                os.kill(self.pid, signum)
        except (ProcessLookupError, OSError):
            pass

    def close(self) -> None:
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None


class Launcher:
    """Starts job supervisors through one long-lived server; safe to share between threads."""

    def __init__(self, cgroup_parent: str = "", cgroup_prefix: str = "") -> None:
        """cgroup_parent: where the server makes one pids cgroup per job, named cgroup_prefix + a number
        ('' for none)."""
        self.cgroup_parent = cgroup_parent
        self.cgroup_prefix = cgroup_prefix
        self._lock = threading.Lock()
        self._server: subprocess.Popen[bytes] | None = None
        self._sock: socket.socket | None = None

    def launch(self, request: dict, fds: tuple[int, int, int]) -> Supervised:
        """Start a job `request` (cwd, env, argv, rlimits, processes) with fds (stdout, stderr, status).

        The caller keeps and closes its copies of `fds`. A dead or wedged
        server is replaced once before giving up with LaunchError.
        """
        payload = json.dumps(request).encode()
        with self._lock:
            for attempt in (1, 2):
                sock = self._ensure_server()
                try:
                    sock.sendmsg([payload], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
                    return self._reply(sock)
                except (OSError, ValueError) as exc:
                    self._stop_server()
                    if attempt == 2:
                        raise LaunchError(f"sandbox supervisor server failed: {exc}") from exc
                    log.warning("sandbox supervisor server failed (%s); starting a new one", exc)
        raise AssertionError("unreachable")

    def close(self) -> None:
        """Stop the server: closing our end makes it exit; running jobs' supervisors get SIGTERM."""
        with self._lock:
            self._stop_server()

    def _reply(self, sock: socket.socket) -> Supervised:
        fd_space = socket.CMSG_SPACE(array.array("i").itemsize)
        msg, ancdata, _flags, _addr = sock.recvmsg(4096, fd_space, socket.MSG_CMSG_CLOEXEC)
        pidfds = array.array("i")
        for level, kind, data in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                pidfds.frombytes(data[: len(data) - len(data) % pidfds.itemsize])
        if not msg:
            for fd in pidfds:
                os.close(fd)
            raise ConnectionError("the server closed the connection")
        pidfd = pidfds[0] if pidfds else None
        for fd in pidfds[1:]:
            os.close(fd)
        reply = json.loads(msg)
        if "error" in reply:
            raise ConnectionError(reply["error"])
        return Supervised(int(reply["pid"]), pidfd, reply["cgroup"])

    def _ensure_server(self) -> socket.socket:
        if self._sock is not None and self._server is not None and self._server.poll() is None:
            return self._sock
        self._stop_server()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._server = subprocess.Popen(
                [
                    sys.executable,
                    "-I",
                    "-S",
                    SUPERVISOR,
                    "--serve",
                    str(theirs.fileno()),
                    self.cgroup_parent,
                    self.cgroup_prefix,
                ],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                start_new_session=True,  # off the engine's terminal: Ctrl-C reaches the engine, which cleans up
                cwd="/",
                env={},
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        ours.settimeout(_REPLY_TIMEOUT_S)
        self._sock = ours
        return ours

    def _stop_server(self) -> None:
        sock, server = self._sock, self._server
        self._sock = self._server = None
        if sock is not None:
            sock.close()
        if server is not None:
            try:
                server.wait(timeout=2.0)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
