"""Sandboxes: where an agent variant's code runs, so that nothing it does reaches the engine.

Backends share the types in `base`; `make_sandbox(name)` builds one by name.
`process` (see `process.py` for what it holds and not), `bwrap` (the same
inside bubblewrap namespaces, see `bwrap.py`) and `auto` (the strongest of
them that works on this machine).
Backends are imported lazily so that importing this package stays cheap.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from .base import Sandbox, SandboxJob, SandboxLimits, SandboxResult

if TYPE_CHECKING:
    from .bwrap import BwrapSandbox
    from .process import ProcessSandbox

__all__ = [
    "SANDBOX_NAMES",
    "BwrapSandbox",
    "ProcessSandbox",
    "Sandbox",
    "SandboxJob",
    "SandboxLimits",
    "SandboxResult",
    "make_sandbox",
]

SANDBOX_NAMES = ("process", "bwrap", "auto")

log = logging.getLogger(__name__)


def make_sandbox(name: str) -> Sandbox:
    """Build the sandbox backend called `name`; ValueError listing the choices if there is none.

    'auto' is the strongest backend that works here: `bwrap` when bubblewrap
    can create its namespaces, else `process`; the choice is logged (and is
    the returned sandbox's `name`). 'bwrap' raises RuntimeError saying why
    when bubblewrap is missing or cannot run here.
    """
    if name == "auto":
        from .bwrap import bwrap_available

        ok, why = bwrap_available()
        if ok:
            log.info("sandbox auto: using bwrap")
            return make_sandbox("bwrap")
        log.info("sandbox auto: using process (%s)", why)
        return make_sandbox("process")
    if name == "process":
        from .process import ProcessSandbox

        return ProcessSandbox()
    if name == "bwrap":
        from .bwrap import BwrapSandbox

        return BwrapSandbox()
    raise ValueError(
        f"unknown sandbox {name!r}; choose one of: {', '.join(SANDBOX_NAMES)}"
    )


def __getattr__(name: str) -> Any:
    if name == "ProcessSandbox":
        from .process import ProcessSandbox

        return ProcessSandbox
    if name == "BwrapSandbox":
        from .bwrap import BwrapSandbox

        return BwrapSandbox
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
