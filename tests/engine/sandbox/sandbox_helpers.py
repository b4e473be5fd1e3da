"""Helpers shared by the sandbox tests (imported by path-relative module name; no conftest)."""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
import uuid

from engine.sandbox import ProcessSandbox, SandboxJob, SandboxLimits, SandboxResult

PY = sys.executable


def script_job(
    code: str,
    answer_file: str = "answer.txt",
    *,
    args: tuple[str, ...] = (),
    **limits: float,
) -> SandboxJob:
    """A job running `code` as runner.py with the given limit overrides."""
    return SandboxJob(
        files={"runner.py": textwrap.dedent(code).encode()},
        command=[PY, "runner.py", *args],
        answer_file=answer_file,
        limits=SandboxLimits(**limits),  # type: ignore[arg-type]
    )


def run(job: SandboxJob, sandbox: ProcessSandbox | None = None) -> SandboxResult:
    return asyncio.run((sandbox or ProcessSandbox()).run(job))


def new_marker() -> str:
    """A token put in a job's argv so that its processes can be found in /proc."""
    return f"clade-test-{uuid.uuid4().hex}"


def pids_with_marker(marker: str) -> list[int]:
    found = []
    token = marker.encode()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    if token in f.read():
                        found.append(int(name))
            except OSError:
                pass
    return found


def process_exists(pid: int) -> bool:
    """True while the pid exists at all, zombies included (os.kill(pid, 0) succeeds on zombies)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def count_processes() -> int:
    return sum(1 for name in os.listdir("/proc") if name.isdigit())
