"""What a cluster executor's job does on the node before the inner sandbox runs it (Ray and Slurm alike)."""

from __future__ import annotations

import dataclasses
import os
import sys

from .base import Sandbox, SandboxJob, SandboxResult

__all__ = ["local_python", "run_here"]


async def run_here(sandbox: Sandbox, job: SandboxJob) -> SandboxResult:
    """The job on this node; a gateway reached over TCP (--gateway-listen) through a local relay."""
    if job.llm is None or not job.llm.url:
        return await sandbox.run(job)
    from .relay import relayed

    async with relayed(job.llm) as local:
        return await sandbox.run(dataclasses.replace(job, llm=local))


def local_python(job: SandboxJob) -> SandboxJob:
    """The engine names its own interpreter in a job's command; a node where that path does not exist runs
    the job with this process's Python (the same version: the executors require it)."""
    command = list(job.command)
    if command and not os.path.exists(command[0]) and os.path.basename(command[0]).startswith("python"):
        return dataclasses.replace(job, command=[sys.executable, *command[1:]])
    return job
