"""What a job's processes start with: an allow-listed environment and the rlimits.

The environment is built from nothing, so no variable of the engine's (API
keys, PYTHONPATH, proxies) reaches a job; the rlimits (CPU, address space,
file size, no core files, and RLIMIT_NPROC without a cgroup) are handed to
the supervisor as text. `bwrap` and `docker` start from the same environment.
"""

from __future__ import annotations

import os
import resource
import sys

from .base import SandboxLimits

_MB = 2**20


def _job_env(workdir: str, python: str | None = None) -> dict[str, str]:
    """An allow-listed environment: nothing of the engine's (API keys, PYTHONPATH, ...) leaks in.

    The engine's interpreter directory goes first on PATH so that `python`
    means the engine's interpreter (a pyenv shim would need PYENV_ROOT/HOME);
    with `python` (the task's own, `--task-python`), that one's directory goes
    before everything, so `python` means it.
    """
    path = os.environ.get("PATH") or os.defpath
    exe_dir = os.path.dirname(sys.executable)
    if exe_dir and exe_dir not in path.split(os.pathsep):
        path = exe_dir + os.pathsep + path
    if python:
        path = os.pathsep.join(
            [os.path.dirname(python)] + [p for p in path.split(os.pathsep) if p != os.path.dirname(python)]
        )
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
