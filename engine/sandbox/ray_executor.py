"""The Ray executor: every sandboxed evaluation is a Ray task (`--executor ray`, the `[ray]` extra).

`RaySandbox` is a Sandbox like the others, so the scheduler and
`engine/loop/evaluation.py` do not know it is there: `run(job)` submits one Ray
task and awaits its result. The task builds the inner backend (`process`,
`bwrap`, `docker`, `auto`) on the worker with `make_sandbox` (one per worker
process, cached) and runs the job there. The SandboxJob itself is the task's
argument, so the agent's files travel with the task; what comes back is the
SandboxResult. Grading and every archive write stay in the engine process,
which alone holds the archive: it records what `run()` returns, once.

Failures:
- A worker process or node that dies (SIGKILL, OOM killer, lost machine)
  loses only the task it was running. Ray runs it again on a live worker
  (`max_retries`, system failures only; an exception raised by the inner
  sandbox is a bug and is not retried). The inner job dies with its worker:
  the process sandbox's supervisor server exits when the worker's end of its
  socket closes, and its job supervisors (PR_SET_PDEATHSIG) kill their jobs.
  If every attempt dies, `run()` returns an 'error' result saying so rather than stopping the search.
- Cancelling `run()` (Ctrl-C, SIGTERM, the scheduler abandoning work) calls
  `ray.cancel(ref, force=True)`: the worker is killed, and the job with it
  (the same way), then the CancelledError goes on. Cancelled tasks are not
  retried.
- A cluster that cannot be reached, or is broken (the runtime environment
  cannot be set up), raises RuntimeError: the run stops, nothing is recorded
  for it.

Where Ray runs: without `address`, a local Ray is started (num_cpus =
`workers`, so that as many evaluations run at once as the local executor
would; no dashboard; worker logs not forwarded) and shut down by `close()`.
With `address` ("auto", "host:port" of the GCS, or "ray://host:10001" for Ray
Client) the driver joins that cluster; its size decides how many evaluations
run at once, and `close()` only disconnects.

How the code reaches the workers: the task function lives in this module, and
Ray pickles it by reference, so every worker must import
`engine.sandbox.ray_executor`. Workers do not reliably see the engine's
sys.path (on another machine the checkout does not exist, and an installed
copy may be stale), so Ray is started or joined with a job runtime_env
`{"py_modules": [<staged engine package>]}`: a temporary copy of
`engine/__init__.py` and the `engine/sandbox/` package (Python files and any
data files next to them, no __pycache__) and nothing else - no archives, no
runs/ folder, no tasks, no holdout data, no other engine modules. This is
what a worker needs (the sandbox backends and the supervisor script) and all
of it; py_modules rather than `working_dir` because it is added to the
workers' sys.path under the package name without changing their current
directory, and an allow-list copy cannot pick up a large file by accident.
Ray uploads it once per content hash. Workers need Python 3.11, Ray, and
whatever the inner backend needs on their node (bubblewrap, a Docker daemon
and image).

When Ray is already initialised in this process (a caller did it), it is used
as it is, without the runtime_env, and `close()` leaves it alone.

Ray is imported lazily: importing `engine.sandbox` or this module does not
import it (`ray_available()` says whether it can be).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import shutil
import socket
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Self

from .base import Sandbox, SandboxJob, SandboxResult
from .on_node import check_inner, local_python, run_here

__all__ = ["MAX_RETRIES", "RaySandbox", "ray_available"]

log = logging.getLogger(__name__)

MAX_RETRIES = 3  # attempts after the first when the worker or node running a job dies
CONNECT_TIMEOUT_S = 5.0  # for the reachability check of --ray-address
LOCAL_OBJECT_STORE_BYTES = 512 * 2**20  # results are small (answer <= 16 MiB); Ray spills beyond it

_ENGINE_DIR = Path(__file__).resolve().parents[1]


def install_hint() -> str:
    from engine.install import install_extra

    return f"ray not installed: {install_extra('ray')}"


def ray_available() -> tuple[bool, str]:
    """(can the Ray executor run here, one line why / which version)."""
    try:
        import ray
    except ImportError:
        return False, install_hint()
    except Exception as exc:  # noqa: BLE001 - a broken install: say what broke, on one line
        return False, f"ray cannot be imported: {_one_line(exc)}"
    return True, f"ray {getattr(ray, '__version__', '?')}"


class RaySandbox:
    """Runs each job as a Ray task on the inner sandbox backend `inner`; see the module docstring."""

    def __init__(
        self,
        inner: str,
        *,
        address: str | None = None,
        workers: int = 1,
        inner_options: Mapping[str, Any] | None = None,
        trace_dir: str | os.PathLike[str] | None = None,
        max_retries: int = MAX_RETRIES,
    ) -> None:
        """inner: the backend run on the workers (a name `make_sandbox` knows).
        address: an existing cluster; None starts a local Ray with `workers` CPUs.
        inner_options: keyword arguments of `make_sandbox(inner, ...)` on the workers (image, cpus, base_dir).
        trace_dir: test hook: each attempt appends "start PID" / "end PID" lines to trace_dir/ray-trace.log.
        max_retries: how many more attempts a job gets when the worker or node running it dies.

        RuntimeError (one line) when Ray is missing, the cluster cannot be
        reached, or Ray cannot start.
        """
        ok, why = ray_available()
        if not ok:
            raise RuntimeError(why)
        check_inner(inner, max_retries)
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers!r}")
        self.inner = inner
        self.name = f"ray/{inner}"
        self.address = address
        self.workers = workers
        self.inner_options = dict(inner_options or {})
        self.trace_dir = os.fspath(trace_dir) if trace_dir is not None else None
        self.max_retries = max_retries
        self._started_ray = _connect(address, workers)
        import ray

        self._remote = ray.remote(num_cpus=1, max_retries=max_retries, retry_exceptions=False)(_run_job)

    async def run(self, job: SandboxJob) -> SandboxResult:
        import ray
        import ray.exceptions as rex

        ref = self._remote.remote(job, self.inner, self.inner_options, self.trace_dir)
        clock = time.monotonic()
        try:
            return await asyncio.wrap_future(ref.future())
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):  # Ray already gone: so is the job
                ray.cancel(ref, force=True)  # kills the worker, and with it the job
            raise
        except (rex.WorkerCrashedError, rex.NodeDiedError, rex.OutOfMemoryError, rex.ObjectLostError) as exc:
            # every attempt died with its worker or node: this evaluation failed, the search goes on
            return SandboxResult(
                status="error", returncode=None, answer=None, stdout_tail="", stderr_tail="",
                runtime_s=time.monotonic() - clock,
                reason=f"the Ray worker running this job died on each of {self.max_retries + 1} attempts "
                       f"({type(exc).__name__}: {_one_line(exc)})"[:500],
            )  # fmt: skip

    def cluster_said(self) -> str:
        """'a Ray cluster of 3 nodes (4 CPUs)': what the driver sees now, for the run's header."""
        import ray

        from engine.words import plural  # the engine's side only: workers get engine/sandbox alone

        alive = [n for n in ray.nodes() if n.get("Alive")]
        cpus = sum(n.get("Resources", {}).get("CPU", 0) for n in alive)
        return f"a Ray cluster of {plural(len(alive), 'node')} ({cpus:g} CPUs for evaluations)"

    def close(self) -> None:
        """Shut Ray down (a local Ray) or disconnect (a cluster), if this object started it."""
        if self._started_ray:
            self._started_ray = False
            import ray

            ray.shutdown()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ----- the driver side: starting or joining Ray ----------------------------


def _connect(address: str | None, workers: int) -> bool:
    """Start a local Ray or join `address`; True if this call did ray.init (so close() undoes it)."""
    import ray

    if ray.is_initialized():
        log.info("ray executor: using the Ray already initialised in this process")
        return False
    if address:
        _check_reachable(address)
    with _staged_engine() as engine_dir, _quiet_ray_init():
        runtime_env = {"py_modules": [engine_dir]}
        try:
            if not address:
                ray.init(
                    address="local",  # always a new local Ray, whatever RAY_ADDRESS says
                    num_cpus=max(1, workers),
                    num_gpus=0,
                    object_store_memory=LOCAL_OBJECT_STORE_BYTES,
                    include_dashboard=False,
                    log_to_driver=False,
                    configure_logging=False,
                    runtime_env=runtime_env,
                )
            elif address.startswith("ray://"):
                ray.init(address=address, runtime_env=runtime_env)  # Ray Client takes few options
            else:
                ray.init(address=address, runtime_env=runtime_env, log_to_driver=False, configure_logging=False)
        except Exception as exc:  # noqa: BLE001 - whatever Ray raises, the user gets one line
            with contextlib.suppress(Exception):
                ray.shutdown()
            what = f"connect to the Ray cluster at {address}" if address else "start a local Ray"
            hint = ""
            if address and os.environ.get("RAY_AUTH_MODE", "").lower() != "token":
                # Ray sends its token to an explicit address only when told to
                hint = " (if the cluster uses token authentication: RAY_AUTH_MODE=token)"
            raise RuntimeError(f"cannot {what}: {_one_line(exc)}{hint}") from None
    return True


def _check_reachable(address: str) -> None:
    """Fail fast, on one line, when host:port does not answer (ray.init would retry for minutes)."""
    rest = address.removeprefix("ray://")
    host, colon, port = rest.rpartition(":")
    if not colon or not port.isdigit() or not host:
        return  # "auto", a bare host: let Ray resolve it
    host = host.strip("[]")
    try:
        with socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        why = exc.strerror or str(exc) or type(exc).__name__
        raise RuntimeError(f"cannot reach the Ray cluster at {address}: {why}") from None


@contextlib.contextmanager
def _staged_engine() -> Iterator[str]:
    """A temporary copy of what workers import: engine/__init__.py and the engine/sandbox package."""
    with tempfile.TemporaryDirectory(prefix="clade-ray-code-") as tmp:
        target = Path(tmp) / "engine"
        target.mkdir()
        init = _ENGINE_DIR / "__init__.py"
        if init.exists():
            shutil.copy2(init, target / "__init__.py")
        else:
            (target / "__init__.py").touch()
        shutil.copytree(
            _ENGINE_DIR / "sandbox", target / "sandbox",
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*"),
        )  # fmt: skip
        yield str(target)  # Ray zips and uploads it during ray.init, so it can go afterwards


@contextlib.contextmanager
def _quiet_ray_init() -> Iterator[None]:
    """Ray's informational warnings at start-up (token auth, ...) would go to the user's terminal."""
    logger = logging.getLogger("ray")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _one_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0][:300] if lines else type(exc).__name__


# ----- the worker side: the task ---------------------------------------------

_SANDBOXES: dict[str, Sandbox] = {}  # one per backend, per worker process


def _run_job(job: SandboxJob, inner: str, options: Mapping[str, Any], trace_dir: str | None) -> SandboxResult:
    """The Ray task: run `job` on this worker's `inner` sandbox and return how it ended."""
    from . import make_sandbox

    key = repr((inner, sorted(options.items())))
    sandbox = _SANDBOXES.get(key)
    if sandbox is None:
        sandbox = _SANDBOXES[key] = make_sandbox(inner, **options)
    _trace(trace_dir, "start")
    result = asyncio.run(run_here(sandbox, local_python(job)))
    _trace(trace_dir, "end")
    return dataclasses.replace(result, worker=f"{_node_label()}/{sandbox.name}")


def _node_label() -> str:
    """Which Ray node ran the job: 'ray:<its IP>/<the first 12 hex digits of its node id>' (the caller adds the
    sandbox it used there)."""
    import ray

    try:
        return f"ray:{ray.util.get_node_ip_address()}/{ray.get_runtime_context().get_node_id()[:12]}"
    except Exception:  # noqa: BLE001 - a label is not worth failing the job for
        return "ray"


def _trace(trace_dir: str | None, event: str) -> None:
    if trace_dir:
        with open(os.path.join(trace_dir, "ray-trace.log"), "a") as f:
            f.write(f"{event} {os.getpid()}\n")
