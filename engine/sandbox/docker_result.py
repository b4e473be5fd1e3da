"""A docker job's `SandboxResult`, from its container's exit code, OOM flag and output.

The exit code is read in the `process` sandbox's terms (128+N: killed by
signal N; 127 with the init's message: the command could not start) and goes
through `report._result`, so every backend gives the same statuses and
reasons; an OOM kill says the memory limit.
"""

from __future__ import annotations

import re
import time
from dataclasses import replace

from .base import SandboxJob, SandboxLimits, SandboxResult
from .output import _Tail
from .report import _Ended, _Report, _result

_SIGNAL_EXIT_BASE = 128
_NSIG = 65
_EXEC_FAILED_CODE = 127
# the init's message, or the capture's (_capture.py) when the job's own command could not start
_TINI_EXEC_FAILED = re.compile(r"(?:\[FATAL tini \(\d+\)\]|clade-capture:) exec .* failed: (.*)$", re.MULTILINE)


def _failure(
    out: _Tail,
    err: _Tail,
    t0: float,
    reason: str,
    runtime: float | None = None,
) -> SandboxResult:
    return SandboxResult(
        status="error",
        returncode=None,
        answer=None,
        stdout_tail=out.text(),
        stderr_tail=err.text(),
        runtime_s=time.monotonic() - t0 if runtime is None else runtime,
        reason=f"docker: {reason}",
    )


def _container_report(code: int | None, err: _Tail) -> _Report:
    """The container's exit code in the process sandbox's terms (128+N: signal N; None: no exit status)."""
    failed_exec = _TINI_EXEC_FAILED.search(err.text()) if code == _EXEC_FAILED_CODE else None
    if code is None:
        return _Report()
    if failed_exec:  # the init could not start the command (not found, not executable)
        return _Report(kind="execfail", message=failed_exec.group(1))
    if _SIGNAL_EXIT_BASE < code < _SIGNAL_EXIT_BASE + _NSIG:
        return _Report(kind="signal", code=code - _SIGNAL_EXIT_BASE)
    return _Report(kind="exit", code=code)


def _docker_result(job: SandboxJob, ended: _Ended, oom: bool) -> SandboxResult:
    """The process sandbox's statuses and reasons (`ended.report` from `_container_report`), and the OOM kill."""
    res = _result(job, replace(ended, answer_reason=""))
    reason = res.reason
    if oom and not ended.timed_out:
        reason = _out_of_memory(job.limits, res.status, reason)
    if ended.answer_reason:
        reason = f"{reason}; {ended.answer_reason}" if reason else ended.answer_reason
    return replace(res, reason=reason)


def _out_of_memory(limits: SandboxLimits, status: str, reason: str) -> str:
    what = f"out of memory (limit {limits.memory_mb} MB)"
    if status == "killed":
        return f"{what}, {reason}"
    return f"{reason} after one of its processes ran {what}" if reason else what
