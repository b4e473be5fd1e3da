"""An opened run and how its session talks to its user: what travels from opening a run to its summary."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.config import RunConfig
from engine.front.backend import SandboxChoice

if TYPE_CHECKING:
    from archive import Archive
    from engine.front.cutting import CutShort
    from engine.lang.compile_check import CompileCheck
    from tasks.base import Task


@dataclass(frozen=True)
class OpenedRun:
    """A run ready to go on: new, resumed, replayed or restored from a snapshot."""

    archive: Archive
    task: Task
    config: RunConfig
    box: SandboxChoice
    checks: tuple[CompileCheck | None, str] = (None, "")  # the compile check, and the header's words for it
    resumed: bool = False  # --resume or --resume-from: the tree goes on from the archive

    @property
    def folder(self) -> Path:
        return Path(self.archive.path).parent


@dataclass(frozen=True)
class Front:
    """How a session talks to its user: the console, whether it shows progress, the tests' offline model."""

    console: Any
    quiet: bool = False
    llm_mock: Any = None  # handed to litellm as mock_response: the whole client path runs without a network
    cut: CutShort | None = None  # a stop asked from another thread (clade.search beside a running event loop)
