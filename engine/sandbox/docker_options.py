"""What a docker job's container is made with: its limits, mounts, user and environment.

`container_options` turns a `SandboxJob` into the keyword arguments of
`client.containers.create` (network `none`, memory/CPU/pids caps, rlimits,
read-only root, /job bind mount, uid, dropped capabilities, labels for the
sweep); `job_user` picks the uid the job runs as. Pure: no daemon, no SDK
import, so the options can be checked without Docker.
"""

from __future__ import annotations

import os
import re
import socket
import sys
from collections.abc import Sequence
from typing import Any

from .base import JOB_LLM_SOCKET, SandboxJob, SandboxLimits, llm_env
from .jobenv import _job_env

JOB_DIR = "/job"
CAPTURE_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_capture.py")
CAPTURE_TARGET = "/clade/capture.py"  # the script, bound read-only
CAPTURE_DIR = "/clade/out"  # where it writes the output's tails, bound read-write from a host folder
IMAGE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
JOB_UID = JOB_GID = 65534  # nobody / nogroup
LABEL = "clade.sandbox"

_MB = 2**20
DATA_DIR = "/clade-data"  # where a job finds the host paths it reads (`mounts`)
_PYTHON = re.compile(r"python(3(\.\d+)?)?")


def container_options(
    job: SandboxJob,
    workdir: str,
    image: str,
    cpus: float | None,
    engine_pid: int,
    *,
    user: str | None = None,
    mounts: tuple[str, ...] = (),
    capture: str | None = None,
) -> dict[str, Any]:
    """The keyword arguments of `client.containers.create(**options)` for `job`.

    workdir: the host directory holding the job's files, mounted at /job.
    cpus: CPUs the job may use; None takes the job's `limits.cpus` (1 if it has none).
    engine_pid: labels the container, so that a later engine can remove it if this one dies.
    user: uid:gid of the job (default 65534:65534; `DockerSandbox` passes `job_user()`).
    mounts: host paths the job reads, bound read-only under DATA_DIR (`/clade-data/root/.cache/...`: the host
    path itself may lie in a folder the job's user cannot enter, such as /root); a task's data, Polyglot's caches.
    capture: a host folder the job's user may write: the command then runs under the image's python3 running
    `_capture.py`, which keeps the last `limits.output_bytes` of its stdout and stderr there (the daemon's log is
    then only the fallback). Pure: no daemon, no SDK import.
    """
    limits = job.limits
    if cpus is None:
        cpus = float(getattr(limits, "cpus", 1.0))
    if not cpus > 0:
        raise ValueError(f"cpus must be > 0, got {cpus!r}")
    argv = _image_argv(job.command)
    if capture is not None:
        argv = ["python3", "-I", "-S", CAPTURE_TARGET, str(limits.output_bytes), CAPTURE_DIR, "--", *argv]
    return {
        "image": image,
        "entrypoint": argv[:1],  # not the image's ENTRYPOINT: the job's command, as given
        "command": argv[1:],
        "working_dir": JOB_DIR,
        "environment": {**_container_env(), **llm_env(job.llm, JOB_LLM_SOCKET)},
        "user": user or f"{JOB_UID}:{JOB_GID}",
        "hostname": "sandbox",
        "labels": {
            LABEL: "1",
            "clade.engine_pid": str(engine_pid),
            "clade.host": socket.gethostname(),
        },
        **_limit_options(limits, cpus),
        **_filesystem_options(job, workdir, mounts, capture),
        **_isolation_options(limits),
    }


def _limit_options(limits: SandboxLimits, cpus: float) -> dict[str, Any]:
    """No network; memory, CPU and process caps over the whole container; rlimits per process."""
    memory = limits.memory_mb * _MB
    fsize = limits.file_size_mb * _MB
    return {
        "network_mode": "none",
        "mem_limit": memory,
        "memswap_limit": memory,  # equal to mem_limit: no swap
        "nano_cpus": round(cpus * 1e9),
        "pids_limit": limits.processes,
        "ulimits": [
            {"name": "cpu", "soft": limits.cpu_s, "hard": limits.cpu_s + 1},
            {"name": "fsize", "soft": fsize, "hard": fsize},
            {"name": "core", "soft": 0, "hard": 0},
        ],
    }


def _filesystem_options(
    job: SandboxJob, workdir: str, mounts: tuple[str, ...] = (), capture: str | None = None
) -> dict[str, Any]:
    """A read-only root; writable only /job (the host's workdir) and two small tmpfs in RAM; `mounts` read-only
    under DATA_DIR; with `capture`, the output's capture script (read-only) and its folder."""
    captured = (
        [
            {"Type": "bind", "Source": CAPTURE_SCRIPT, "Target": CAPTURE_TARGET, "ReadOnly": True},
            {"Type": "bind", "Source": capture, "Target": CAPTURE_DIR, "ReadOnly": False},
        ]
        if capture is not None
        else []
    )
    return {
        "read_only": True,
        "mounts": [{"Type": "bind", "Source": workdir, "Target": JOB_DIR, "ReadOnly": False}]
        + [{"Type": "bind", "Source": path, "Target": DATA_DIR + path, "ReadOnly": True} for path in mounts]
        + (
            [{"Type": "bind", "Source": job.llm.socket_path, "Target": JOB_LLM_SOCKET, "ReadOnly": False}]
            if job.llm is not None
            else []
        )  # the LLM gateway's socket alone: no network needed
        + captured,
        "tmpfs": {"/tmp": "size=64m,mode=1777"},
        "shm_size": 64 * _MB,
    }


def _isolation_options(limits: SandboxLimits) -> dict[str, Any]:
    """No privileges, a capped log, an init as pid 1; the container outlives its job until we remove it."""
    return {
        "ipc_mode": "private",
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "log_config": {
            "type": "json-file",
            "config": {"max-size": str(max(_MB, 4 * limits.output_bytes)), "max-file": "2"},
        },
        "init": True,
        "stdin_open": False,
        "tty": False,
        "detach": True,
        "auto_remove": False,  # removed by us, after its state and logs were read
        "use_config_proxy": False,  # else the SDK copies proxy variables of ~/.docker/config.json in
    }


def _container_env() -> dict[str, str]:
    """The allow-listed job environment, with the image's PATH and a locale every image has."""
    env = _job_env(JOB_DIR)
    env["PATH"] = IMAGE_PATH
    env["LANG"] = "C.UTF-8"
    env.pop("LC_ALL", None)
    return env


def _image_argv(command: Sequence[str]) -> list[str]:
    """The command inside the image: a Python interpreter (the engine's host path, `python`, `python3.11`)
    becomes the image's `python3`, the one name every image with Python has (Debian's has no `python`)."""
    argv = list(command)
    if _is_python(argv[0]):
        argv[0] = "python3"
    return argv


def _is_python(program: str) -> bool:
    if _PYTHON.fullmatch(os.path.basename(program)):
        return True
    try:
        return os.path.realpath(program) == os.path.realpath(sys.executable)
    except (OSError, ValueError):
        return False


def job_user(rootless: bool = False) -> str:
    """The uid:gid a job runs as: one that can write /job, and whose files the engine can delete.

    An engine running as root: 65534 (nobody), the work directory is given to it.
    Otherwise the engine's own uid and gid (not root either), so that the engine
    can remove whatever the job leaves in /job. With a rootless daemon, root in
    the container is the engine's user outside (without capabilities: all dropped).
    """
    if rootless:
        return "0:0"
    if os.geteuid() == 0:
        return f"{JOB_UID}:{JOB_GID}"
    return f"{os.getuid()}:{os.getgid()}"


def _hand_to_job_user(workdir: str, user: str) -> None:
    """Give the work directory to the job's user when the engine (as root) runs jobs as another user."""
    if os.geteuid() != 0 or user != f"{JOB_UID}:{JOB_GID}":
        return
    for dirpath, _, filenames in os.walk(workdir):
        os.chown(dirpath, JOB_UID, JOB_GID)
        for name in filenames:
            os.chown(os.path.join(dirpath, name), JOB_UID, JOB_GID, follow_symlinks=False)
