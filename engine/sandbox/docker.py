"""The `docker` sandbox: each job in a fresh container, removed afterwards (docker SDK).

A job's files are written into a fresh host directory, bind-mounted read-write
at `/job` (the cwd, HOME and TMPDIR) of a new container of the sandbox image
(default `DEFAULT_IMAGE`: Debian bookworm's python3 and numpy, built the
first time it is missing from the Debian mirror with no registry, see
`docker_build`). A Python interpreter in the job's command (the engine's own
host path included) becomes the image's `python3`: no host path reaches a
container. What a container
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
  Docker socket; only a task's own data its tests read (`mounts`: Polyglot's
  compiled Catch, Go cache and Jest), read-only under /clade-data;
- privileges: not root: uid/gid 65534 when the engine runs as root, else the
  engine's own uid/gid (so that it can delete what the job leaves in /job; see
  `job_user`); all capabilities dropped, no-new-privileges (setuid binaries
  do not elevate), a private IPC namespace;
- environment: built from an allow-list (`jobenv._job_env`), with the
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

Output: the command runs under `_capture.py` (the image's python3, the script
bound read-only at /clade/capture.py), which reads its stdout and stderr from
pipes and keeps the last `output_bytes` of each in /clade/out, a host folder
read once the container is gone: the end of the output arrives whatever the
daemon's log does under load. The daemon's log, streamed as it comes (its own
file capped by a json-file size limit), is the fallback where the capture
wrote nothing. So an image for this sandbox needs `python3`, as the Python
tasks do anyway. The answer file is read from the host directory once the
container is gone, with the same checks as the `process` sandbox.

What it does NOT hold: the kernel is the host's (a kernel exploit escapes any
container); disk space under /job is limited per file (RLIMIT_FSIZE), not in
total; a job that exits with 128+N on purpose is reported as killed by signal
N (the same convention as `bwrap`); a job that could not be started is
recognised by the init's message and exit code 127. The daemon must be local
(the work directory is a host path bind-mounted into the container), and not
remap user namespaces (`userns-remap`: the job could not write /job). Anyone
who can talk to the Docker daemon is root on the host: the sandbox protects
the engine from the job, not the machine from its users.

This module holds the sandbox and its job's course; the rest lives beside it:
`docker_options` (the container's limits and run options), `docker_daemon`
(connecting, availability, the image build), `docker_output` (log streams
into bounded tails), `docker_result` (exit code to `SandboxResult`),
`docker_sweep` (removing containers, those of dead engines included) and
`docker_threads` (the SDK's blocking calls from asyncio).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import tempfile
import time
import uuid
import weakref
from dataclasses import dataclass
from typing import Any

from .base import SandboxJob, SandboxResult
from .docker_daemon import (
    _API_TIMEOUT_S,
    DEFAULT_IMAGE,
    _connect,
    _one_line,
    docker_available,
    ensure_image,
)
from .docker_options import (
    IMAGE_PATH,
    JOB_DIR,
    _hand_to_job_user,
    _image_argv,
    container_options,
    job_user,
)
from .docker_output import _drain, _pump, _settle_tails, take_captured
from .docker_result import _container_report, _docker_result, _failure
from .docker_sweep import _close, _remove_container, _remove_stale_containers
from .docker_threads import _in_thread, _settled
from .output import _Tail
from .report import _Ended
from .workdir import _read_answer, _rmtree, _sweep_stale_workdirs, _write_files

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

_KILL_WAIT_S = 10.0  # after kill, how long the container is waited for before it is force-removed
_WORKDIR_PREFIX = "clade-docker-"


@dataclass(frozen=True)
class _Exit:
    """How a started container ended."""

    code: int | None  # its exit status; None when it was killed at the limit and none came back
    oom: bool  # the kernel's OOM killer ended one of its processes
    timed_out: bool
    runtime: float  # seconds from its start to its end (or to the kill)


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
        mounts: tuple[str, ...] = (),
    ) -> None:
        """image: the image jobs run in (default DEFAULT_IMAGE; it and COMPILERS_IMAGE are
        built when missing, from Debian's packages with no registry; any other must
        already be on the machine and hold `python3` for Python jobs). cpus: CPUs per job, overriding the
        jobs' `limits.cpus`. base_dir: where the host work directories are made
        (default: tempfile.gettempdir()). client: a docker SDK client (default:
        from the environment, DOCKER_HOST etc.). mounts: host paths every job reads, bound read-only under
        /clade-data (a task's data, such as Polyglot's compiled Catch and Jest; never a compiler).

        RuntimeError("docker sandbox unavailable: ...") when the daemon does not
        answer or the image is missing and cannot be built.
        """
        if cpus is not None and not cpus > 0:
            raise ValueError(f"cpus must be > 0, got {cpus!r}")
        try:
            import docker.errors
            import requests.exceptions
        except ImportError:
            from engine.install import install_extra

            raise RuntimeError(
                f"docker sandbox unavailable: the docker SDK is not installed ({install_extra('docker')})"
            ) from None
        self.image = image or DEFAULT_IMAGE
        self.cpus = cpus
        self.mounts = tuple(mounts)
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
        _remove_stale_containers(client, self._errors)
        _sweep_stale_workdirs(self.base_dir or tempfile.gettempdir(), _WORKDIR_PREFIX)

    def close(self) -> None:
        """Remove any container still here and close the client (also run at interpreter exit)."""
        self._finalizer()

    async def run(self, job: SandboxJob) -> SandboxResult:
        # What the container runs, in its reports too: an interpreter's host path becomes the image's python3.
        job = dataclasses.replace(job, command=_image_argv(job.command))
        limits = job.limits
        outer = tempfile.mkdtemp(prefix=f"{_WORKDIR_PREFIX}{os.getpid()}-", dir=self.base_dir)
        workdir = os.path.join(outer, "job")  # the outer directory stays private to the engine's user
        captured = os.path.join(outer, "output")  # the capture's tails (docker_output.take_captured)
        out, err = _Tail(limits.output_bytes), _Tail(limits.output_bytes)
        t0 = time.monotonic()
        container: Any = None
        removed = False
        try:
            try:
                os.mkdir(workdir)
                os.mkdir(captured)
                _write_files(workdir, job.files)
                _hand_to_job_user(workdir, self.user)
                _hand_to_job_user(captured, self.user)
            except OSError as exc:
                return _failure(out, err, t0, f"could not prepare the work directory: {exc}")
            options = container_options(
                job, workdir, self.image, self.cpus, os.getpid(), user=self.user, mounts=self.mounts, capture=captured
            )
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
                error = None if made.cancelled() else made.exception()  # not cancelled, no container: create raised
                if error is not None and not isinstance(error, self._errors):
                    raise error  # a bug, not the daemon
                return _failure(out, err, t0, f"could not create the container: {why}")
            try:
                await asyncio.to_thread(container.start)
            except self._errors as exc:
                return _failure(out, err, t0, f"could not start {job.command[0]!r}: {_one_line(exc)}")
            end = await self._wait_for_exit(container, limits.timeout_s, out, err)
            if isinstance(end, SandboxResult):
                return end
            removed = await self._remove(container)
            take_captured(captured, out, err)  # the end of the output, whatever the daemon's log lost
            answer, answer_reason = _read_answer(workdir, job.answer_file, job.answer_limit)
            report = _container_report(end.code, err)
            return _docker_result(
                job, _Ended(report, end.timed_out, end.runtime, out, err, answer, answer_reason), end.oom
            )
        finally:
            # Also on cancellation (Ctrl-C): the container is killed and removed before it goes on.
            try:
                if container is not None and not removed:
                    await self._remove(container)  # re-raises a cancellation that came meanwhile
            finally:
                _rmtree(outer)

    async def _wait_for_exit(self, container: Any, timeout_s: float, out: _Tail, err: _Tail) -> _Exit | SandboxResult:
        """Wait for the started container to end, killing it at the wall-clock limit, its output drained
        into out and err; a failure result when its exit status was lost (not after a kill)."""
        t0 = time.monotonic()
        waiter = _in_thread(container.wait)
        streams: list[Any] = []
        pumps = [
            _in_thread(_pump, container, True, out, streams),
            _in_thread(_pump, container, False, err, streams),
        ]
        done, _ = await asyncio.wait({waiter}, timeout=timeout_s)
        runtime = time.monotonic() - t0
        timed_out = not done
        if timed_out:
            try:
                await asyncio.to_thread(container.kill)
            except self._errors:
                pass  # it stopped meanwhile, or the daemon is gone: the removal settles it
            await asyncio.wait({waiter}, timeout=_KILL_WAIT_S)
        await _drain(pumps, streams)
        await asyncio.to_thread(_settle_tails, container, out, err, self._errors)
        if waiter.done() and waiter.exception() is None:
            code = int(waiter.result().get("StatusCode", -1))
            return _Exit(code, await self._oom_killed(container), timed_out, runtime)
        if timed_out:
            return _Exit(None, False, timed_out, runtime)
        why = "no exit status" if not waiter.done() else _one_line(waiter.exception())
        return _failure(out, err, t0, f"lost the container: {why}", runtime)

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
