"""The `docker` sandbox: each job in a fresh container, removed afterwards (docker SDK).

A job's files are written into a fresh host directory, bind-mounted read-write
at `/job` (the cwd, HOME and TMPDIR) of a new container of the sandbox image
(default `DEFAULT_IMAGE`: python:3.11-slim + numpy, built from
`docker_image/Dockerfile` the first time it is missing). What a container
holds, through the options `container_options` builds:

- no network: network mode `none` (only a loopback interface);
- memory: one cap on the total of all the job's processes (`mem_limit`), no
  swap beyond it (`memswap_limit` equal); the kernel's OOM killer ends the
  job, reported as "out of memory (limit N MB)";
- CPU: `cpus` CPUs' worth of time across processes (`nano_cpus`), plus
  RLIMIT_CPU per process (soft `cpu_s`, hard one second more), RLIMIT_FSIZE
  per file and no core files;
- processes: at most `limits.processes` processes and threads alive at once
  (`pids_limit`), a fork bomb included;
- files: the image's root filesystem read-only; writable only /job (the host
  directory), a 64 MB /tmp tmpfs and the container's private /dev/shm (both
  in RAM, counted in the memory cap). Nothing else of the host is mounted: not
  the repository, the run's archive, holdout data, home directories or the
  Docker socket;
- privileges: not root: uid/gid 65534 when the engine runs as root, else the
  engine's own uid/gid (so that it can delete what the job leaves in /job; see
  `job_user`); all capabilities dropped, no-new-privileges (setuid binaries
  do not elevate), a private IPC namespace;
- environment: built from an allow-list (`process._job_env`), with the
  image's PATH and a C.UTF-8 locale; no variable of the engine's (API keys,
  proxies) enters; the SDK's proxy injection is turned off;
- an agent that calls a model gets the run's LLM gateway socket (only that
  socket) bind-mounted at /run/clade/llm.sock and CLADE_LLM_URL /
  CLADE_LLM_TOKEN; the network stays `none`. A job's `hidden` host paths are
  not in the image in the first place;
- lifetime: wall clock `limits.timeout_s`, then the container is killed;
  `init=True` runs a minimal init as pid 1, so daemons the job starts are
  reaped and die with the container. The container is removed (forced) after
  every job, when the awaiting task is cancelled (Ctrl-C in the engine) before
  the cancellation goes on, on `close()`, and at interpreter exit. Containers
  of an engine killed with SIGKILL are removed by the next `DockerSandbox` on
  the same host (they are labelled with the engine's pid and host name).

Output is streamed from the daemon's log API as it comes, and only the last
`output_bytes` of each stream are kept (the daemon's own log file is capped by
a json-file size limit). The answer file is read from the host directory once
the container is gone, with the same checks as the `process` sandbox.

What it does NOT hold: the kernel is the host's (a kernel exploit escapes any
container); disk space under /job is limited per file (RLIMIT_FSIZE), not in
total; a job that exits with 128+N on purpose is reported as killed by signal
N (the same convention as `bwrap`); a job that could not be started is
recognised by the init's message and exit code 127. The daemon must be local
(the work directory is a host path bind-mounted into the container), and not
remap user namespaces (`userns-remap`: the job could not write /job). Anyone
who can talk to the Docker daemon is root on the host: the sandbox protects
the engine from the job, not the machine from its users.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import socket
import sys
import tempfile
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .base import JOB_LLM_SOCKET, SandboxJob, SandboxLimits, SandboxResult, llm_env
from .cgroup import pid_alive
from .process import (
    _job_env,
    _read_answer,
    _Report,
    _result,
    _rmtree,
    _Tail,
    _write_files,
)

__all__ = [
    "DEFAULT_IMAGE",
    "IMAGE_PATH",
    "JOB_DIR",
    "DockerSandbox",
    "container_options",
    "docker_available",
    "ensure_image",
    "job_user",
]

log = logging.getLogger(__name__)

DEFAULT_IMAGE = "clade-sandbox:py3.11"
IMAGE_DIR = Path(__file__).with_name("docker_image")  # holds the Dockerfile of DEFAULT_IMAGE
JOB_DIR = "/job"
IMAGE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
JOB_UID = JOB_GID = 65534  # nobody / nogroup
LABEL = "clade.sandbox"

_MB = 2**20
_PING_TIMEOUT_S = 3
_API_TIMEOUT_S = 60  # create / start / kill / remove; waiting for the job has no timeout
_BUILD_TIMEOUT_S = 1800
_MAX_POOL = 128  # connections to the daemon: three long-lived ones per job in flight
_KILL_WAIT_S = 10.0  # after kill, how long the container is waited for before it is force-removed
# After the container stopped, how long its log streams get to deliver the rest: they end by
# themselves once the daemon has sent everything, which takes seconds for megabytes on a busy daemon.
_PUMP_GRACE_S = 30.0
_CLOSE_GRACE_S = 2.0
_SIGNAL_EXIT_BASE = 128
_NSIG = 65
_WORKDIR_PREFIX = "clade-docker-"
_PYTHON = re.compile(r"python(3(\.\d+)?)?")
_EXEC_FAILED_CODE = 127
_TINI_EXEC_FAILED = re.compile(r"\[FATAL tini \(\d+\)\] exec .* failed: (.*)$", re.MULTILINE)


# ----------------------------------------------------------------------------- options


def container_options(
    job: SandboxJob,
    workdir: str,
    image: str,
    cpus: float | None,
    engine_pid: int,
    *,
    user: str | None = None,
) -> dict[str, Any]:
    """The keyword arguments of `client.containers.create(**options)` for `job`.

    workdir: the host directory holding the job's files, mounted at /job.
    cpus: CPUs the job may use; None takes the job's `limits.cpus` (1 if it has none).
    engine_pid: labels the container, so that a later engine can remove it if this one dies.
    user: uid:gid of the job (default 65534:65534; `DockerSandbox` passes `job_user()`).
    Pure: no daemon, no SDK import.
    """
    limits = job.limits
    if cpus is None:
        cpus = float(getattr(limits, "cpus", 1.0))
    if not cpus > 0:
        raise ValueError(f"cpus must be > 0, got {cpus!r}")
    memory = limits.memory_mb * _MB
    fsize = limits.file_size_mb * _MB
    argv = _image_argv(job.command)
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
        "read_only": True,
        "mounts": [{"Type": "bind", "Source": workdir, "Target": JOB_DIR, "ReadOnly": False}]
        + ([{"Type": "bind", "Source": job.llm.socket_path, "Target": JOB_LLM_SOCKET, "ReadOnly": False}]
           if job.llm is not None else []),  # the LLM gateway's socket alone: no network needed
        "tmpfs": {"/tmp": "size=64m,mode=1777"},
        "shm_size": 64 * _MB,
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
    """The command inside the image: the engine's interpreter (a host path) becomes `python`."""
    argv = list(command)
    if _is_python(argv[0]):
        argv[0] = "python"
    return argv


def _is_python(program: str) -> bool:
    if _PYTHON.fullmatch(os.path.basename(program)):
        return True
    try:
        return os.path.realpath(program) == os.path.realpath(sys.executable)
    except (OSError, ValueError):
        return False


# ----------------------------------------------------------------------------- availability


def _connect(timeout: float) -> tuple[Any, str]:
    """(a client whose daemon answered ping, '') or (None, one line saying why). Never raises."""
    try:
        import docker
    except ImportError:
        return None, "the docker SDK is not installed (pip install docker)"
    try:
        client = docker.from_env(timeout=timeout, max_pool_size=_MAX_POOL)
    except Exception as exc:  # noqa: BLE001 - any failure means "not usable", said in one line
        return None, _daemon_down(exc)
    try:
        client.ping()
    except Exception as exc:  # noqa: BLE001
        client.close()
        return None, _daemon_down(exc)
    return client, ""


def _daemon_down(exc: BaseException) -> str:
    where = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    text = str(exc)
    if "FileNotFoundError" in text or "No such file" in text:
        why = "no socket there (is the daemon running?)"
    elif "PermissionError" in text or "Permission denied" in text:
        why = "permission denied (is your user in the 'docker' group?)"
    elif "Connection refused" in text or "ConnectionRefused" in text:
        why = "connection refused (is the daemon running?)"
    elif "timed out" in text.lower():
        why = "no answer within the time limit"
    else:
        why = _one_line(exc)
    return f"no Docker daemon answers at {where}: {why}"


def _image_present(client: Any, image: str) -> bool:
    import docker.errors

    try:
        client.images.get(image)
    except docker.errors.ImageNotFound:
        return False
    return True


def docker_available(image: str | None = None, *, build: bool = True) -> tuple[bool, str]:
    """(True, '') if the docker sandbox can run here with `image`; else (False, one line why). Never raises.

    The SDK must import and the daemon answer a ping within a few seconds. With
    an image, it must exist locally, or be `DEFAULT_IMAGE` and `build` be True
    (it is then built on first use).
    """
    client, why = _connect(_PING_TIMEOUT_S)
    if client is None:
        return False, why
    try:
        if image is not None and not _image_present(client, image):
            if image != DEFAULT_IMAGE:
                return False, f"image {image!r} is not on this machine (run: docker pull {image})"
            if not build:
                return False, f"image {image!r} is not built yet (--sandbox docker builds it)"
        return True, ""
    except Exception as exc:  # noqa: BLE001
        return False, f"the Docker daemon failed: {_one_line(exc)}"
    finally:
        client.close()


def ensure_image(client: Any, image: str = DEFAULT_IMAGE) -> None:
    """Make sure `image` is on the daemon: build `DEFAULT_IMAGE` when missing; RuntimeError otherwise.

    A user-given image is never pulled: the error says to `docker pull` it.
    """
    import docker.errors

    try:
        if _image_present(client, image):
            return
    except docker.errors.DockerException as exc:
        raise RuntimeError(f"could not look up image {image!r}: {_one_line(exc)}") from None
    if image != DEFAULT_IMAGE:
        raise RuntimeError(
            f"image {image!r} is not on this machine; run `docker pull {image}` first"
        )
    log.warning(
        "docker sandbox: building image %s (python:3.11-slim + numpy, from %s); "
        "first time only, it needs network access and takes a minute or two",
        image,
        IMAGE_DIR / "Dockerfile",
    )
    try:
        client.images.build(
            path=str(IMAGE_DIR), tag=image, rm=True, forcerm=True, timeout=_BUILD_TIMEOUT_S
        )
    except Exception as exc:  # noqa: BLE001 - BuildError, APIError, a dropped connection: one line
        raise RuntimeError(f"could not build image {image!r}: {_one_line(exc)}") from None
    log.warning("docker sandbox: image %s built", image)


# ----------------------------------------------------------------------------- the sandbox


class DockerSandbox:
    """Runs each job in a fresh container; see the module docstring for what it holds and not."""

    name = "docker"

    def __init__(
        self,
        image: str | None = None,
        *,
        cpus: float | None = None,
        base_dir: str | os.PathLike[str] | None = None,
        client: Any = None,
    ) -> None:
        """image: the image jobs run in (default DEFAULT_IMAGE, built when missing; any
        other must already be on the machine). cpus: CPUs per job, overriding the
        jobs' `limits.cpus`. base_dir: where the host work directories are made
        (default: tempfile.gettempdir()). client: a docker SDK client (default:
        from the environment, DOCKER_HOST etc.).

        RuntimeError("docker sandbox unavailable: ...") when the daemon does not
        answer or the image is missing and cannot be built.
        """
        if cpus is not None and not cpus > 0:
            raise ValueError(f"cpus must be > 0, got {cpus!r}")
        try:
            import docker.errors
            import requests.exceptions
        except ImportError:
            raise RuntimeError(
                "docker sandbox unavailable: the docker SDK is not installed (pip install docker)"
            ) from None
        self.image = image or DEFAULT_IMAGE
        self.cpus = cpus
        self.base_dir = os.fspath(base_dir) if base_dir is not None else None
        # Failures of the daemon or of the connection to it: a job ends as 'error', never a traceback.
        self._errors: tuple[type[BaseException], ...] = (
            docker.errors.DockerException,
            requests.exceptions.RequestException,
            OSError,
        )
        if client is None:
            client, why = _connect(_API_TIMEOUT_S)
            if client is None:
                raise RuntimeError(f"docker sandbox unavailable: {why}")
        self._client = client
        self._live: dict[str, Any] = {}  # container id -> container, until removed
        self._instance = uuid.uuid4().hex  # labels this sandbox's containers, for close()
        self._finalizer = weakref.finalize(self, _close, client, self._live, self._instance)
        try:
            ensure_image(client, self.image)
        except RuntimeError as exc:
            self._finalizer()
            raise RuntimeError(f"docker sandbox unavailable: {exc}") from None
        self.user = job_user(rootless=self._rootless())
        self._remove_stale_containers()
        self._remove_stale_workdirs()

    def close(self) -> None:
        """Remove any container still here and close the client (also run at interpreter exit)."""
        self._finalizer()

    async def run(self, job: SandboxJob) -> SandboxResult:
        limits = job.limits
        outer = tempfile.mkdtemp(prefix=f"{_WORKDIR_PREFIX}{os.getpid()}-", dir=self.base_dir)
        workdir = os.path.join(outer, "job")  # the outer directory stays private to the engine's user
        out, err = _Tail(limits.output_bytes), _Tail(limits.output_bytes)
        t0 = time.monotonic()
        container: Any = None
        removed = False
        try:
            try:
                os.mkdir(workdir)
                _write_files(workdir, job.files)
                _hand_to_job_user(workdir, self.user)
            except OSError as exc:
                return _failure(out, err, t0, f"could not prepare the work directory: {exc}")
            options = container_options(job, workdir, self.image, self.cpus, os.getpid(), user=self.user)
            options["labels"]["clade.instance"] = self._instance
            # Settled even if cancelled meanwhile, so that a container made just then is removed too.
            made, cancelled = await _settled(lambda: self._client.containers.create(**options))
            if not made.cancelled() and made.exception() is None:
                container = made.result()
                self._live[container.id] = container
            if cancelled:
                raise asyncio.CancelledError
            if container is None:
                why = "cancelled" if made.cancelled() else _one_line(made.exception())
                if not made.cancelled() and not isinstance(made.exception(), self._errors):
                    raise made.exception()  # a bug, not the daemon
                return _failure(out, err, t0, f"could not create the container: {why}")
            try:
                await asyncio.to_thread(container.start)
            except self._errors as exc:
                return _failure(out, err, t0, f"could not start {job.command[0]!r}: {_one_line(exc)}")
            t0 = time.monotonic()
            waiter = _in_thread(container.wait)
            streams: list[Any] = []
            pumps = [
                _in_thread(_pump, container, True, out, streams),
                _in_thread(_pump, container, False, err, streams),
            ]
            done, _ = await asyncio.wait({waiter}, timeout=limits.timeout_s)
            runtime = time.monotonic() - t0
            timed_out = not done
            if timed_out:
                try:
                    await asyncio.to_thread(container.kill)
                except self._errors:
                    pass  # it stopped meanwhile, or the daemon is gone: the removal below settles it
                await asyncio.wait({waiter}, timeout=_KILL_WAIT_S)
            await _drain(pumps, streams)
            await asyncio.to_thread(_settle_tails, container, out, err, self._errors)
            if not waiter.done() or waiter.exception() is not None:
                if timed_out:
                    code, oom = None, False
                else:
                    why = "no exit status" if not waiter.done() else _one_line(waiter.exception())
                    return _failure(out, err, t0, f"lost the container: {why}", runtime)
            else:
                code = int(waiter.result().get("StatusCode", -1))
                oom = await self._oom_killed(container)
            removed = await self._remove(container)
            answer, answer_reason = _read_answer(workdir, job.answer_file, job.answer_limit)
            return _docker_result(
                job, code, oom, timed_out, runtime, out, err, answer, answer_reason
            )
        finally:
            # Also on cancellation (Ctrl-C): the container is killed and removed before it goes on.
            try:
                if container is not None and not removed:
                    await self._remove(container)  # re-raises a cancellation that came meanwhile
            finally:
                _rmtree(outer)

    def _rootless(self) -> bool:
        try:
            options = self._client.info().get("SecurityOptions") or []
        except self._errors as exc:
            log.warning("docker sandbox: could not ask the daemon for its options: %s", _one_line(exc))
            return False
        return any("name=rootless" in str(o) for o in options)

    async def _oom_killed(self, container: Any) -> bool:
        try:
            await asyncio.to_thread(container.reload)
            return bool(container.attrs.get("State", {}).get("OOMKilled"))
        except self._errors:
            return False

    async def _remove(self, container: Any) -> bool:
        """Kill and remove the container, finishing even if cancelled meanwhile; then re-raise that.

        True when it is gone.
        """
        done, cancelled = await _settled(_remove_container, container)
        gone = not done.cancelled() and done.result()
        if gone:
            self._live.pop(container.id, None)
        if cancelled:
            raise asyncio.CancelledError
        return gone

    def _remove_stale_containers(self) -> None:
        """Remove this host's sandbox containers whose engine is no longer alive (killed with -9)."""
        host = socket.gethostname()
        try:
            found = self._client.containers.list(
                all=True,
                filters={"label": [f"{LABEL}=1", f"clade.host={host}"]},
                ignore_removed=True,
            )
        except self._errors as exc:
            log.warning("docker sandbox: could not list old containers: %s", _one_line(exc))
            return
        stale = 0
        for container in found:
            labels = container.labels or {}
            pid = labels.get("clade.engine_pid", "")
            if labels.get("clade.host") != host or not pid.isdigit() or pid_alive(int(pid)):
                continue
            if _remove_container(container):
                stale += 1
        if stale:
            log.warning("docker sandbox: removed %d container(s) left by engines that died", stale)

    def _remove_stale_workdirs(self) -> None:
        """Remove host work directories of engines that died (named by their pid)."""
        base = self.base_dir or tempfile.gettempdir()
        try:
            names = os.listdir(base)
        except OSError:
            return
        for name in names:
            pid, dash, _ = name[len(_WORKDIR_PREFIX) :].partition("-")
            if name.startswith(_WORKDIR_PREFIX) and dash and pid.isdigit() and not pid_alive(int(pid)):
                _rmtree(os.path.join(base, name))


def _close(client: Any, live: dict[str, Any], instance: str) -> None:
    """Remove the sandbox's containers still there (known, or found by its label), close the client."""
    for container in list(live.values()):
        if _remove_container(container):
            live.pop(container.id, None)
    try:
        left = client.containers.list(
            all=True, filters={"label": f"clade.instance={instance}"}, ignore_removed=True
        )
    except Exception:  # noqa: BLE001 - the daemon is gone: the next engine's sweep removes them
        left = []
    for container in left:
        _remove_container(container)
    try:
        client.close()
    except Exception:  # noqa: BLE001, S110 - closing a dead connection
        pass


def _remove_container(container: Any) -> bool:
    """Force-remove (kills it first if running). True when it is gone. Blocking; never raises."""
    try:
        container.remove(force=True)
    except Exception as exc:  # noqa: BLE001 - any failure is logged; a later sweep gets it
        status = getattr(exc, "status_code", None)
        if status == 404:
            return True
        if status == 409 and "in progress" in str(exc):
            return True  # someone else is removing it
        log.warning(
            "docker sandbox: could not remove container %s: %s",
            str(getattr(container, "id", "?"))[:12],
            _one_line(exc),
        )
        return False
    return True


# ----------------------------------------------------------------------------- helpers


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


_TAIL_LINES = 64


def _pump(container: Any, stdout: bool, tail: _Tail, streams: list[Any]) -> None:
    """Blocking: follow one of the container's output streams into `tail` until it ends."""
    stream = container.logs(stdout=stdout, stderr=not stdout, stream=True, follow=True)
    streams.append(stream)
    for chunk in stream:
        tail.add(chunk)


def _settle_tails(container: Any, out: _Tail, err: _Tail, errors: tuple[type[BaseException], ...]) -> None:
    """Blocking: check each stream's tail against the daemon's log once the container stopped.

    A followed stream can lose data when the capped json-file log rotates
    under a flood, the end included; the log itself keeps the latest output,
    which then replaces the tail.
    At most _TAIL_LINES lines of at most 16 KB each (the daemon splits longer
    ones) are read, so a flood never reaches the engine's memory.
    """
    for tail, stdout in ((out, True), (err, False)):
        if tail.keep <= 0:
            continue
        try:
            last = container.logs(stdout=stdout, stderr=not stdout, tail=_TAIL_LINES)
        except errors:
            continue  # keep what the stream brought
        last = last[-tail.keep :]
        if last and not tail.buf.endswith(last):  # the stream lost the end: the log's last lines win
            tail.buf = bytearray(last)


async def _drain(pumps: list[asyncio.Future[Any]], streams: list[Any]) -> None:
    """Let the log streams deliver what is left (they end with the container); close them if stuck."""
    _, pending = await asyncio.wait(pumps, timeout=_PUMP_GRACE_S)
    if pending:
        log.warning(
            "docker sandbox: output still streaming %.0f s after the container stopped; "
            "keeping what arrived",
            _PUMP_GRACE_S,
        )
        for stream in list(streams):
            try:
                stream.close()
            except Exception:  # noqa: BLE001, S110 - a stream already gone
                pass
        await asyncio.wait(pending, timeout=_CLOSE_GRACE_S)


async def _settled(fn: Callable[..., Any], *args: Any) -> tuple[asyncio.Future[Any], bool]:
    """Run a short blocking call on the loop's executor to its end, even if cancelled meanwhile.

    Returns (its finished future, whether a cancellation arrived meanwhile): a
    container must not be left behind because Ctrl-C cut its creation or removal
    short; the caller goes on with the cancellation afterwards. The future is
    not a Task, so cancelling all tasks at the loop's shutdown leaves it alone.
    """
    future = asyncio.get_running_loop().run_in_executor(None, fn, *args)
    future.add_done_callback(_retrieve)
    cancelled = False
    while not future.done():
        try:
            await asyncio.shield(future)
        except asyncio.CancelledError:
            cancelled = True
        except BaseException:  # noqa: BLE001, S110 - the call's own failure, read from the future
            pass
    return future, cancelled


def _in_thread(fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
    """Run a long blocking call (waiting on a container) on its own daemon thread.

    Not asyncio.to_thread: calls that last as long as a job would fill the
    loop's shared executor, and the kills queued behind them would never run.
    The thread ends when its container is gone.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    future.add_done_callback(_retrieve)

    def settle(result: Any, exc: BaseException | None) -> None:
        if future.done():
            return
        if exc is None:
            future.set_result(result)
        else:
            future.set_exception(exc)

    def target() -> None:
        try:
            result, exc = fn(*args), None
        except BaseException as e:  # noqa: BLE001 - handed to the awaiting side
            result, exc = None, e
        try:
            loop.call_soon_threadsafe(settle, result, exc)
        except RuntimeError:
            pass  # the loop is closed: nobody is waiting any more

    threading.Thread(target=target, name="clade-docker-wait", daemon=True).start()
    return future


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()  # an unawaited failure is expected (the container was removed), not a warning


def _one_line(exc: BaseException | None) -> str:
    """A daemon error in one line: the daemon's explanation when there is one."""
    text = str(getattr(exc, "explanation", None) or exc or type(exc).__name__)
    line = " ".join(text.split())
    return line if len(line) <= 300 else line[:297] + "..."


def _failure(
    out: _Tail,
    err: _Tail,
    t0: float,
    reason: str,
    runtime: float | None = None,
) -> SandboxResult:
    return SandboxResult(
        status="error",
        returncode=None,
        answer=None,
        stdout_tail=out.text(),
        stderr_tail=err.text(),
        runtime_s=time.monotonic() - t0 if runtime is None else runtime,
        reason=f"docker: {reason}",
    )


def _docker_result(
    job: SandboxJob,
    code: int | None,
    oom: bool,
    timed_out: bool,
    runtime: float,
    out: _Tail,
    err: _Tail,
    answer: bytes | None,
    answer_reason: str,
) -> SandboxResult:
    """The process sandbox's statuses and reasons, from the container's exit code (128+N: signal N)."""
    failed_exec = _TINI_EXEC_FAILED.search(err.text()) if code == _EXEC_FAILED_CODE else None
    if code is None:
        report = _Report()
    elif failed_exec:  # the init could not start the command (not found, not executable)
        report = _Report(kind="execfail", message=failed_exec.group(1))
    elif _SIGNAL_EXIT_BASE < code < _SIGNAL_EXIT_BASE + _NSIG:
        report = _Report(kind="signal", code=code - _SIGNAL_EXIT_BASE)
    else:
        report = _Report(kind="exit", code=code)
    res = _result(
        limits=job.limits, job=job, report=report, timed_out=timed_out, runtime=runtime,
        out=out, err=err, answer=answer, answer_reason="",
    )  # fmt: skip
    reason = res.reason
    if oom and not timed_out:
        reason = _out_of_memory(job.limits, res.status, reason)
    if answer_reason:
        reason = f"{reason}; {answer_reason}" if reason else answer_reason
    return SandboxResult(
        status=res.status,
        returncode=res.returncode,
        answer=res.answer,
        stdout_tail=res.stdout_tail,
        stderr_tail=res.stderr_tail,
        runtime_s=res.runtime_s,
        reason=reason,
    )


def _out_of_memory(limits: SandboxLimits, status: str, reason: str) -> str:
    what = f"out of memory (limit {limits.memory_mb} MB)"
    if status == "killed":
        return f"{what}, {reason}"
    return f"{reason} after one of its processes ran {what}" if reason else what
