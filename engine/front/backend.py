"""Where a run's evaluations run: its config turned into one sandbox object (maybe behind Ray)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.config import RunConfig
from engine.errors import UserError
from engine.sandbox.base import Sandbox

if TYPE_CHECKING:
    from engine.lang.toolchain import Toolchain


@dataclass(frozen=True)
class SandboxChoice:
    sandbox: Sandbox  # what the run's evaluations go through (maybe a RaySandbox around the backend)
    said: str  # the header's words: which backend, where, and why ('auto')
    name: str  # the backend that runs the jobs: process, bwrap or docker


_HINTS = {
    "bwrap": "apt-get install bubblewrap, or --sandbox process",
    "docker": "start the Docker daemon, or --sandbox bwrap / process",
}


def _hint(name: str, said: str) -> str:
    """What to do when backend `name` could not be made, having said `said`."""
    if name == "docker" and "no Docker daemon answers" not in said and "SDK" not in said:
        return "or --image IMAGE, one on this machine with python3; or --sandbox bwrap / process"
    return _HINTS.get(name, "or another --sandbox")


def build_sandbox(
    config: RunConfig,
    workers: int,
    toolchains: tuple[Toolchain, ...] = (),
    compiled: bool = False,
    run_dir: Path | None = None,
    task_image: str | None = None,
) -> SandboxChoice:
    """The sandbox the run's evaluations go through, with what the header says of it.

    `run_dir`: the run's folder; `--executor slurm` keeps its jobs' files in its `slurm/` folder (a temporary
    folder without it).
    `toolchains`: the task's compilers found on the engine's PATH (engine/lang/toolchain.py); process and bwrap
    pass (and bwrap binds) what they need, docker runs its image's own.

    UserError (one line) when it cannot run here. 'auto' is resolved here, on
    the engine's machine, and the name it resolved to is what Ray workers
    build too. `compiled`: the task's candidates need a compiler, so docker's
    default image is the one with the compilers (built on first use). `task_image`: the task's own
    (`Task.docker_image`, Polyglot's), used when --image is not given.
    """
    from engine.sandbox import make_sandbox, resolve_sandbox
    from engine.sandbox.docker_build import COMPILERS_IMAGE

    ev = config.evaluation
    image = ev.image or task_image or (COMPILERS_IMAGE if compiled else None)
    try:
        name, why = resolve_sandbox(ev.sandbox, image, docker=ev.task_python is None)
    except ValueError as exc:  # CLADE_AUTO_SANDBOXES names no backend, or none of those it names works
        raise UserError(str(exc)) from None
    options: dict[str, Any] = {"image": image} if name == "docker" and image else {}
    if toolchains:
        options["toolchains"] = toolchains
    if ev.task_python is not None:  # bwrap binds its prefixes; both put it first on PATH
        options["python"] = ev.task_python
    sandbox: Sandbox
    cluster = ""  # what a Ray cluster says of itself
    if ev.executor == "ray":
        sandbox, cluster = _ray_sandbox(config, name, options, workers)
    elif ev.executor == "slurm":
        sandbox, cluster = _slurm_sandbox(config, name, options, run_dir)
    else:
        try:
            sandbox = make_sandbox(name, **options)
        except RuntimeError as exc:
            raise UserError(f"--sandbox {name}: {exc} ({_hint(name, str(exc))})") from None
    return SandboxChoice(sandbox, _said(config, name, why, cluster, run_dir, image), name)


def _ray_sandbox(config: RunConfig, name: str, options: dict[str, Any], workers: int) -> tuple[Sandbox, str]:
    """--executor ray: the sandbox, and what the cluster says of itself (nothing for a local Ray)."""
    from engine.sandbox.ray_executor import RaySandbox, ray_available

    ev = config.evaluation
    ok, missing = ray_available()
    if not ok:
        raise UserError(f"--executor ray cannot run here: {missing}")
    inner = "auto" if ev.sandbox == "auto" else name  # each node picks what works there
    try:
        ray_sandbox = RaySandbox(inner, address=ev.ray_address, workers=workers, inner_options=options)
    except RuntimeError as exc:
        raise UserError(f"--executor ray: {exc}") from None
    return ray_sandbox, ray_sandbox.cluster_said() if ev.ray_address else ""


def _said(config: RunConfig, name: str, why: str, cluster: str, run_dir: Path | None, image: str | None) -> str:
    """What the header says of the sandbox: its name, where it runs, why auto chose it, the image."""
    from engine.sandbox.docker_build import COMPILERS_IMAGE

    ev = config.evaluation
    where = " on Ray" + (f" at {ev.ray_address}" if ev.ray_address else " (local)") if ev.executor == "ray" else ""
    if ev.executor == "slurm":
        where = " on Slurm"
    said = f"sandbox {name}{where}" + (f" (auto: {why})" if ev.sandbox == "auto" else "")
    if ev.executor == "slurm":
        said += f"; {cluster}, job files in {run_dir / 'slurm' if run_dir else 'a temporary folder'}"
    if ev.executor == "ray" and ev.ray_address:
        said += (
            "; "
            + cluster
            + (
                ", each node choosing its own sandbox (the strongest that works there: docker, bwrap or process; "
                "evaluations.worker names the node and the sandbox)"
                if ev.sandbox == "auto"
                else ""
            )
        )
    if ev.task_python is not None:
        said += f", task Python {ev.task_python}"
    if name == "docker" and image == COMPILERS_IMAGE:
        said += f", image {image} (the compilers)"
    return said


def _slurm_sandbox(config: RunConfig, name: str, options: dict[str, Any], run_dir: Path | None) -> tuple[Sandbox, str]:
    """The SlurmSandbox of `--executor slurm` and what the cluster says of itself; UserError when it cannot run."""
    from engine.sandbox.slurm_executor import SlurmSandbox, slurm_available
    from engine.sandbox.slurm_options import parse_slurm_options

    ev = config.evaluation
    ok, missing = slurm_available()
    if not ok:
        raise UserError(f"--executor slurm cannot run here: {missing}")
    if run_dir is None:
        import tempfile

        run_dir = Path(tempfile.mkdtemp(prefix="clade-slurm-"))
    inner = "auto" if ev.sandbox == "auto" else name  # each node picks what works there
    try:
        slurm = SlurmSandbox(
            inner,
            folder=run_dir / "slurm",
            partition=ev.slurm_partition,
            time_limit=ev.slurm_time,
            options=parse_slurm_options(ev.slurm_option or ()),
            inner_options=options,
        )
    except (RuntimeError, ValueError) as exc:
        raise UserError(f"--executor slurm: {exc}") from None
    return slurm, slurm.cluster_said()
