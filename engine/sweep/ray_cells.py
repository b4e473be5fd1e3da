"""A sweep's cells as Ray tasks (`clade sweep --cells-on ray`).

Each cell is one Ray task asking `num_cpus=cpus` that runs the cell's command as a child process of the
worker (`<python> -m engine.search --config CELL/run.toml`, this machine's Python, the environment of
`cell_environment()`, the sweep's working directory), its output appended to CELL/search.log, and returns
the command's exit code. So the worker's node must share the filesystem and Python with this machine: the
cell folder, the engine's checkout and `sys.executable` (on a local Ray, the default, they are this machine's).

Ray is started or joined as `--executor ray` does it (engine/sandbox/ray_executor.py: `--ray-address`, else a
local Ray with this machine's CPUs, quiet). The task function is made inside `_cell_task`, so Ray pickles it
by value: a worker needs no `engine` import to run it (the executor's runtime_env puts only engine/sandbox on
the workers' path).

Stopping: `stop()` is `ray.cancel(ref)`, which raises KeyboardInterrupt in the task; the task forwards SIGINT
to the search (which stores its run as interrupted) and waits for it to end, so the task ends only once the
run is stored. `kill()` is `ray.cancel(ref, force=True)`: the worker dies, and the search with it (Ray kills
a dead worker's children; PR_SET_PDEATHSIG, as `_end_with_parent` does for local cells, where it does not).
The child's signal mask is cleared first: a Ray worker's thread blocks SIGINT, and a blocked signal stays
blocked through exec, so the search would never see stop()'s SIGINT. A task is never retried: a lost cell is
the sweep's to resume, not Ray's to start again beside its stored run. A Ray task dies with its driver, so
`reattach` finds nothing.

On a local Ray, a cell asking more CPUs than the machine has asks for all of them (Ray would otherwise hold
it pending forever); on a cluster the request stands (an autoscaler may add a node that fits it).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from engine.errors import UserError
from engine.sweep.launch import LOG, CellJob, cell_environment

__all__ = ["RayCell", "RayCells"]


class RayCell:
    """One cell's Ray task, as the sweep polls and stops it."""

    def __init__(self, ref: Any) -> None:
        self.ref = ref

    def ended(self) -> bool:
        import ray

        ready, _ = ray.wait([self.ref], timeout=0)
        return bool(ready)

    def stop(self) -> None:
        """KeyboardInterrupt in the task, which sends SIGINT to the search and waits for it to end."""
        if not self.ended():
            _cancel(self.ref, force=False)

    def kill(self) -> None:
        """The task's worker killed, and the search with it."""
        if not self.ended():
            _cancel(self.ref, force=True)

    def exit_code(self) -> int | None:
        """The search's exit code once the task ended (130 after stop()); None while it runs, or when it was killed."""
        import ray

        if not self.ended():
            return None
        try:
            return int(ray.get(self.ref, timeout=0))
        except Exception:  # noqa: BLE001 - cancelled or lost: no exit code to tell
            return None


class RayCells:
    """Cells as Ray tasks; see the module docstring."""

    name = "ray"

    def __init__(self, config: Any) -> None:
        """config: the sweep's shared RunConfig (its evaluation section's `ray_address`).

        UserError (one line) when Ray is missing, the cluster cannot be reached, or a local Ray cannot start."""
        from engine.sandbox.ray_executor import _connect, ray_available

        ok, why = ray_available()
        if not ok:
            raise UserError(f"--cells-on ray: {why}")
        self.address: str | None = config.evaluation.ray_address
        try:
            self._started_ray = _connect(self.address, os.cpu_count() or 1)
        except RuntimeError as exc:
            raise UserError(f"--cells-on ray: {exc}") from None
        import ray

        self._local = not self.address
        self._remote = ray.remote(max_retries=0)(_cell_task())

    def start(self, argv: Sequence[str], cell_folder: Path, cpus: int) -> CellJob:
        import ray

        cell_folder = cell_folder.resolve()
        cell_folder.mkdir(parents=True, exist_ok=True)
        if self._local:
            cpus = min(cpus, max(1, int(ray.cluster_resources().get("CPU", 1))))
        command = [sys.executable, *argv[1:]]
        ref = self._remote.options(num_cpus=cpus, name=f"clade-sweep-{cell_folder.name}").remote(
            command, str(cell_folder / LOG), os.getcwd(), cell_environment()
        )
        return RayCell(ref)

    def reattach(self, cell_folder: Path) -> CellJob | None:
        return None  # a Ray task dies with its driver (the sweep's process), its search with it

    def close(self) -> None:
        """Shut down the local Ray this object started (or disconnect from the cluster it joined)."""
        if self._started_ray:
            self._started_ray = False
            import ray

            ray.shutdown()


def _cancel(ref: Any, force: bool) -> None:
    import ray

    try:
        ray.cancel(ref, force=force)
    except Exception:  # noqa: BLE001 - the task ended meanwhile, or Ray is gone: so is the cell
        pass


def _cell_task() -> Callable[[list[str], str, str, dict[str, str]], int]:
    """The task's function, defined here so that Ray pickles it by value (see the module docstring)."""

    def run_cell(command: list[str], log_path: str, cwd: str, env: dict[str, str]) -> int:
        """On the worker: the cell's search as a child; its exit code. A KeyboardInterrupt (ray.cancel)
        becomes SIGINT to the search, and the task waits for it to store its run and end."""
        import signal
        import subprocess
        import sys

        def in_child() -> None:
            # a Ray worker's thread blocks SIGINT, and the mask lasts through exec (see the module docstring)
            signal.pthread_sigmask(signal.SIG_SETMASK, set())
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            if sys.platform == "linux":  # SIGTERM to the search when the worker dies (kill, force-cancel)
                import ctypes

                ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG

        with open(log_path, "ab") as log:
            child = subprocess.Popen(
                command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True, preexec_fn=in_child,
            )  # fmt: skip
        while True:
            try:
                # a timed wait: Ray's cancel interrupts Python code, not a blocking waitpid
                return child.wait(timeout=0.2)
            except subprocess.TimeoutExpired:
                continue
            except KeyboardInterrupt:
                child.send_signal(signal.SIGINT)

    return run_cell
