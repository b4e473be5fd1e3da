"""Sandboxes: where an agent variant's code runs, so that nothing it does reaches the engine.

Backends share the types in `base`; `make_sandbox(name)` builds one by name.
Only `process` exists so far (see `process.py` for what it holds and not).
Backends are imported lazily so that importing this package stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import Sandbox, SandboxJob, SandboxLimits, SandboxResult

if TYPE_CHECKING:
    from .process import ProcessSandbox

__all__ = [
    "SANDBOX_NAMES",
    "ProcessSandbox",
    "Sandbox",
    "SandboxJob",
    "SandboxLimits",
    "SandboxResult",
    "make_sandbox",
]

SANDBOX_NAMES = ("process",)


def make_sandbox(name: str) -> Sandbox:
    """Build the sandbox backend called `name`; ValueError listing the choices if there is none."""
    if name == "process":
        from .process import ProcessSandbox

        return ProcessSandbox()
    raise ValueError(
        f"unknown sandbox {name!r}; choose one of: {', '.join(SANDBOX_NAMES)}"
    )


def __getattr__(name: str) -> Any:
    if name == "ProcessSandbox":
        from .process import ProcessSandbox

        return ProcessSandbox
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
