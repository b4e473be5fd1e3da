"""Sandboxes: where an agent variant's code runs, so that nothing it does reaches the engine.

Backends share the types in `base`; `make_sandbox(name)` builds one by name.
`process` (see `process.py` for what it holds and not), `bwrap` (the same
inside bubblewrap namespaces, see `bwrap.py`), `docker` (containers, see
`docker.py`) and `auto` (the strongest of them that works on this machine).
`ray_executor.RaySandbox` runs any of them as Ray tasks.
Backends are imported lazily so that importing this package stays cheap.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .base import Sandbox, SandboxJob, SandboxLimits, SandboxResult

if TYPE_CHECKING:
    from .bwrap import BwrapSandbox
    from .process import ProcessSandbox

__all__ = [
    "AUTO_ORDER",
    "AUTO_ORDER_VARIABLE",
    "SANDBOX_NAMES",
    "BwrapSandbox",
    "ProcessSandbox",
    "Sandbox",
    "SandboxJob",
    "SandboxLimits",
    "SandboxResult",
    "auto_order",
    "make_sandbox",
    "resolve_sandbox",
]

SANDBOX_NAMES = ("auto", "process", "bwrap", "docker")

log = logging.getLogger(__name__)


AUTO_ORDER = ("docker", "bwrap", "process")
AUTO_ORDER_VARIABLE = "CLADE_AUTO_SANDBOXES"


def auto_order(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The backends 'auto' may choose, strongest first: `AUTO_ORDER`, or the comma-separated list in the
    environment variable CLADE_AUTO_SANDBOXES (e.g. `bwrap,process`: a machine whose Docker daemon is for
    other work; the test suite's default-sandbox searches, tests/conftest.py). ValueError, one line, on a name
    that is not a backend or an empty list."""
    text = (os.environ if environ is None else environ).get(AUTO_ORDER_VARIABLE, "").strip()
    if not text:
        return AUTO_ORDER
    names = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    unknown = [n for n in names if n not in AUTO_ORDER]
    if unknown or not names:
        raise ValueError(
            f"{AUTO_ORDER_VARIABLE}={text!r}: {', '.join(unknown) or 'no backend'} is not one of "
            f"{', '.join(AUTO_ORDER)}"
        )
    return tuple(sorted(names, key=AUTO_ORDER.index))


def resolve_sandbox(name: str, image: str | None = None, docker: bool = True) -> tuple[str, str]:
    """(the backend `name` stands for on this machine, why) — 'auto' becomes the strongest that works.

    Strongest first: `docker` (a total memory cap and disk isolation on top of
    what bwrap holds) when a daemon answers and the image is there or can be
    built now without a registry (`docker_available`: probed in seconds), then
    `bwrap` when bubblewrap can create its namespaces, else `process`. Other
    names come back as they are. `docker=False` (a task run by its own
    interpreter, which an image does not hold) leaves docker out, as does a
    CLADE_AUTO_SANDBOXES without it (`auto_order`). ValueError when that
    variable names no backend.
    """
    if name != "auto":
        return name, "asked for"
    from .bwrap import bwrap_available
    from .docker import docker_available

    order = auto_order()
    not_listed = f"not in {AUTO_ORDER_VARIABLE}={','.join(order)}"
    if "docker" not in order:
        docker_ok, docker_why = False, not_listed
    elif not docker:
        docker_ok, docker_why = False, "the task's own Python runs on this machine"
    else:
        docker_ok, docker_why = docker_available(image, build=True)
    if docker_ok:
        return "docker", "a Docker daemon answers and the image is there or buildable offline"
    bwrap_ok, bwrap_why = bwrap_available() if "bwrap" in order else (False, not_listed)
    if bwrap_ok:
        return "bwrap", f"bubblewrap works; no docker: {docker_why}"
    if "process" not in order:
        raise ValueError(
            f"--sandbox auto: no backend of {AUTO_ORDER_VARIABLE} works: docker: {docker_why}; bwrap: {bwrap_why}"
        )
    return "process", f"no docker: {docker_why}; no bwrap: {bwrap_why}"


def make_sandbox(name: str, **options: Any) -> Sandbox:
    """Build the sandbox backend called `name`; ValueError listing the choices if there is none.

    'auto' is resolved by `resolve_sandbox` (the choice is logged, and is the
    returned sandbox's `name`). `options` go to the backend: `image` and
    `cpus` to docker, `python` (the task's own interpreter) and `toolchains`
    (the compilers found on the engine's PATH, engine/lang/toolchain.py) to
    process and bwrap, `base_dir` to every backend (docker runs its image's
    own compilers). A backend that cannot run
    here raises RuntimeError saying why.
    """
    if name == "auto":
        name, why = resolve_sandbox(name, options.get("image"), docker=options.get("python") is None)
        log.info("sandbox auto: using %s (%s)", name, why)
    if name == "docker":  # docker runs the image's own compilers; a task's data among them is bound read-only
        chains = options.pop("toolchains", None) or ()
        data = tuple(path for chain in chains if chain.kind == "data" for path in chain.binds)
        if data:
            options["mounts"] = (*options.get("mounts", ()), *data)
    else:
        options.pop("image", None)
        options.pop("cpus", None)
        options.pop("mounts", None)
    if name == "docker" and options.pop("python", None) is not None:
        raise RuntimeError(
            "the docker sandbox runs the image's own Python, not another one: choose the image "
            "with --image instead of --task-python"
        )
    if name == "process":
        from .process import ProcessSandbox

        return ProcessSandbox(**options)
    if name == "bwrap":
        from .bwrap import BwrapSandbox

        return BwrapSandbox(**options)
    if name == "docker":
        from .docker import DockerSandbox

        return DockerSandbox(**options)
    raise ValueError(f"unknown sandbox {name!r}; choose one of: {', '.join(SANDBOX_NAMES)}")


def __getattr__(name: str) -> Any:
    if name == "ProcessSandbox":
        from .process import ProcessSandbox

        return ProcessSandbox
    if name == "BwrapSandbox":
        from .bwrap import BwrapSandbox

        return BwrapSandbox
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
