"""The compile check inside a container: the compiler runs in the run's docker image, as a job does.

Under `--sandbox docker` the engine's machine may have no compiler, and a
compiler there would read untrusted source outside any container (an
`#include "/etc/..."` reads host files at compile time). So the check is a
`SandboxJob` of its own, run by a `DockerSandbox` of the run's image: no
network, a read-only root, the child's files at `/job`, nothing of the host.
`DockerCompiler.run` is synchronous (the check is called from the search's
loop thread, like the other backends' `subprocess.run`), so the sandbox's
coroutine runs on a private event loop in a worker thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.sandbox.base import SandboxResult
    from engine.sandbox.docker import DockerSandbox

__all__ = ["DockerCompiler", "image_has"]


@dataclass
class DockerCompiler:
    """Runs compiler commands on a child's files in fresh containers of `image` (one sandbox, made once)."""

    image: str
    _sandbox: DockerSandbox | None = field(default=None, repr=False)

    def run(self, files: Mapping[str, bytes], command: Sequence[str]) -> SandboxResult:
        """The command's result; RuntimeError (one line) when the docker sandbox cannot be made."""
        from engine.sandbox.base import SandboxJob, SandboxLimits

        if self._sandbox is None:
            from engine.sandbox.docker import DockerSandbox

            self._sandbox = DockerSandbox(self.image)
        # A compiler needs more room than a job's defaults: rustc and go use threads and a few hundred MB.
        limits = SandboxLimits(timeout_s=30.0, cpu_s=60, memory_mb=2048, processes=256, output_bytes=16384)
        job = SandboxJob(files=dict(files), command=list(command), answer_file="check.out", limits=limits)
        sandbox = self._sandbox
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(asyncio.run, sandbox.run(job)).result()

    def close(self) -> None:
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None


def image_has(image: str, program: str) -> tuple[bool, str]:
    """(True, '') when `program` starts in `image`; else (False, one line why). One container, well under a second."""
    compiler = DockerCompiler(image)
    try:
        probe = ["go", "version"] if program == "go" else [program, "--version"]
        result = compiler.run({}, probe)
    except RuntimeError as exc:
        return False, str(exc)
    finally:
        compiler.close()
    if result.ok:
        return True, ""
    return False, f"{program} does not run in image {image!r} ({result.reason or 'exit ' + str(result.returncode)})"
