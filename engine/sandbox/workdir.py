"""A job's working directory on the host: its files in, its answer out, and its removal.

Shared by every backend: the directory is made fresh for each job, the
answer file is read back with checks (a regular file inside the directory,
not too big) once every job process is dead, and the directory is removed
whatever the job did to it, including those that engines killed with
SIGKILL left behind (named by the engine's pid).
"""

from __future__ import annotations

import logging
import os
import shutil
import stat
from collections.abc import Callable, Mapping

from .cgroup import pid_alive

log = logging.getLogger(__name__)

_MB = 2**20


def _write_files(workdir: str, files: Mapping[str, bytes]) -> None:
    for rel, content in files.items():  # names were checked by SandboxJob
        path = os.path.join(workdir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(content)


def _read_answer(workdir: str, answer_file: str, limit: int) -> tuple[bytes | None, str]:
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

    def report(func: Callable[..., object], p: str, exc_info: tuple) -> None:
        log.warning("could not remove %s: %s", p, exc_info[1])

    shutil.rmtree(path, onerror=report)


def _sweep_stale_workdirs(base: str, prefix: str) -> None:
    """Remove the working directories under `base` of engines that died (named `<prefix><pid>-...`)."""
    try:
        names = os.listdir(base)
    except OSError:
        return
    for name in names:
        pid, dash, _ = name[len(prefix) :].partition("-")
        if name.startswith(prefix) and dash and pid.isdigit() and not pid_alive(int(pid)):
            _rmtree(os.path.join(base, name))
