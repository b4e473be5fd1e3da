"""Per-job `pids` cgroups: the process-count cap that also holds for root.

RLIMIT_NPROC is not enforced for root (and for other users it counts every
process of the user, not of the job), so the real cap is a cgroup with
`pids.max`, one per job, created under the engine's own pids cgroup and
removed after the job. Membership is inherited by every descendant whatever
it does with sessions or process groups, so the cgroup is also the exact list
of what to kill; writing pids.max=0 first stops a fork bomb from outrunning
the kill loop.

Works with cgroup v1 (a `pids` hierarchy) and v2 (when `pids` is enabled for
the engine's cgroup's children, i.e. delegated). When neither is writable
`PidsCgroups.available` is False, the reason is logged once, and the sandbox
falls back to rlimits.
"""

from __future__ import annotations

import itertools
import logging
import os
import secrets
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)

_PREFIX = "clade-"


def _find_pids_parent() -> tuple[str, str]:
    """Return (directory of the engine's own pids cgroup, 'v1'|'v2'), or raise OSError."""
    with open("/proc/self/mounts") as f:
        mounts = f.read()
    with open("/proc/self/cgroup") as f:
        membership = f.read()

    def pids_enabled_for_children(parent: str) -> bool:
        with open(os.path.join(parent, "cgroup.subtree_control")) as f:
            return "pids" in f.read().split()

    return parse_pids_parent(mounts, membership, pids_enabled_for_children)


def parse_pids_parent(
    mounts: str, membership: str, pids_enabled_for_children: Callable[[str], bool]
) -> tuple[str, str]:
    """The pids cgroup directory of a process, from its /proc/self/mounts and /proc/self/cgroup.

    v1 (a hierarchy mounted with the `pids` option) is preferred; with v2 the
    process's cgroup must have `pids` in cgroup.subtree_control for its
    children to get pids.max.
    """
    v1_mount = v2_mount = None
    for line in mounts.splitlines():
        parts = line.split()
        if len(parts) < 4:
            continue
        if parts[2] == "cgroup" and "pids" in parts[3].split(","):
            v1_mount = parts[1]
        elif parts[2] == "cgroup2" and v2_mount is None:
            v2_mount = parts[1]
    own_v1 = own_v2 = None
    for line in membership.splitlines():
        hid, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if "pids" in controllers.split(","):
            own_v1 = path
        elif hid == "0" and controllers == "":
            own_v2 = path
    if v1_mount and own_v1 is not None:
        return os.path.join(v1_mount, own_v1.lstrip("/")), "v1"
    if v2_mount and own_v2 is not None:
        parent = os.path.join(v2_mount, own_v2.lstrip("/"))
        if not pids_enabled_for_children(parent):
            raise OSError(f"pids controller not enabled for children of {parent}")
        return parent, "v2"
    raise OSError("no pids cgroup hierarchy mounted")


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists (it may be another user's)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _members(path: str) -> list[int]:
    try:
        with open(os.path.join(path, "cgroup.procs")) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


@dataclass
class JobCgroup:
    """One job's cgroup directory."""

    path: str

    @property
    def procs_file(self) -> str:
        return os.path.join(self.path, "cgroup.procs")

    def members(self) -> list[int]:
        return _members(self.path)

    def kill(self) -> int:
        """Freeze forking and SIGKILL every member once; return how many were signalled.

        Does not wait: the job's supervisor reaps; `remove` waits for emptiness.
        """
        try:
            _write(os.path.join(self.path, "pids.max"), "0")
        except OSError:
            pass
        pids = self.members()
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        return len(pids)

    def remove(self, wait_s: float = 2.0) -> bool:
        """Kill what is left and remove the directory; False (and a warning) if it stays busy."""
        end = time.monotonic() + wait_s
        while True:
            try:
                os.rmdir(self.path)
                return True
            except FileNotFoundError:
                return True
            except OSError as exc:
                if time.monotonic() > end:
                    log.warning(
                        "could not remove job cgroup %s: %s (members: %s)",
                        self.path,
                        exc,
                        self.members(),
                    )
                    return False
            self.kill()
            time.sleep(0.002)


class PidsCgroups:
    """Creates per-job pids cgroups if this machine lets us; probes once, lazily."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._probed = False
        self._parent: str | None = None
        self.reason = ""
        self._counter = itertools.count()
        self._token = secrets.token_hex(3)  # two sandboxes in one engine never share a name

    @property
    def available(self) -> bool:
        self._probe()
        return self._parent is not None

    def _probe(self) -> None:
        with self._lock:
            if self._probed:
                return
            self._probed = True
            try:
                parent, version = _find_pids_parent()
                probe = os.path.join(parent, f"{_PREFIX}{os.getpid()}-probe")
                os.mkdir(probe)
                try:
                    _write(os.path.join(probe, "pids.max"), "1")
                finally:
                    os.rmdir(probe)
            except OSError as exc:
                self.reason = str(exc)
                return
            self._parent = parent
            log.debug("pids cgroup %s available under %s", version, parent)
            self._remove_stale(parent)

    @staticmethod
    def _remove_stale(parent: str) -> None:
        """Remove job cgroups left by engines that died (name carries the engine pid)."""
        try:
            names = os.listdir(parent)
        except OSError:
            return
        for name in names:
            if not name.startswith(_PREFIX):
                continue
            pid = name[len(_PREFIX) :].split("-", 1)[0]
            if pid.isdigit() and int(pid) != os.getpid() and not pid_alive(int(pid)):
                JobCgroup(os.path.join(parent, name)).remove(wait_s=0.5)

    @property
    def parent(self) -> str:
        """The directory job cgroups are made in ('' when unavailable)."""
        return self._parent or "" if self.available else ""

    @property
    def job_prefix(self) -> str:
        """Start of this engine's job cgroup names: the engine's pid lets a later engine remove stale ones."""
        return f"{_PREFIX}{os.getpid()}-{self._token}-"

    def create(self, max_pids: int) -> JobCgroup | None:
        """A fresh cgroup capped at max_pids tasks, or None when cgroups are unavailable."""
        if not self.available:
            return None
        assert self._parent is not None
        path = os.path.join(self._parent, f"{_PREFIX}{os.getpid()}-{self._token}-{next(self._counter)}")
        cg = JobCgroup(path)
        try:
            try:
                os.mkdir(path)
            except FileExistsError:  # left by an earlier engine that had our pid
                cg.remove()
                os.mkdir(path)
            _write(os.path.join(path, "pids.max"), str(max_pids))
        except OSError as exc:
            log.warning(
                "could not create job cgroup %s (%s); this job runs without a pids cap",
                path,
                exc,
            )
            cg.remove(wait_s=0.1)
            return None
        return cg
