"""What a cluster executor's job does on the node before the inner sandbox runs it (Ray and Slurm alike)."""

from __future__ import annotations

import dataclasses
import os
import sys

from .base import Sandbox, SandboxJob, SandboxResult

__all__ = ["check_inner", "local_python", "run_here"]


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


def check_inner(inner: str, max_retries: int) -> None:
    """ValueError unless `inner` is a backend `make_sandbox` knows and `max_retries` is 0 or more: what a cluster
    executor is given to run on its nodes."""
    from . import SANDBOX_NAMES

    if inner not in SANDBOX_NAMES:
        raise ValueError(f"unknown sandbox {inner!r}; choose one of: {', '.join(SANDBOX_NAMES)}")
    if max_retries < 0:
        raise ValueError(f"max_retries must be >= 0, got {max_retries!r}")
