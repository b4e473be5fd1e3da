"""The engine's last resort against a job: SIGKILL its cgroup, its supervisor's tree and session.

Used when the supervisor does not exit in time, was itself killed, or the
engine is cancelled a second time: containment must not hinge on the
supervisor alone. Finds processes by reading /proc.
"""

from __future__ import annotations

import os
import signal

from .cgroup import JobCgroup


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
    victims |= _session_members(sup_pid)  # the supervisor leads the session its job was started in
    for pid in victims:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
