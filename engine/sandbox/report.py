"""How a job ended, as its supervisor reported it, and the `SandboxResult` made from that.

One place for the statuses and reasons every backend gives (`ok`, `error`,
`timeout`, `killed`, with the limit that was hit): `bwrap` and `docker`
translate their own exit conventions into a `_Report` and go through `_result`.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass, field

from .base import SandboxJob, SandboxResult
from .output import _Tail


@dataclass
class _Report:
    """What the supervisor wrote on its status pipe."""

    kind: str | None = None  # 'exit' | 'signal' | 'execfail' | None (no report: supervisor died)
    code: int = 0
    cpu_s: float = 0.0
    message: str = ""
    stopped: bool = False
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def parse(cls, raw: bytes) -> _Report:
        rep = cls()
        for line in raw.decode(errors="replace").splitlines():
            word, _, rest = line.partition(" ")
            if word == "stopped":
                rep.stopped = True
            elif word == "warn":
                rep.warnings.append(rest)
            elif word == "execfail":
                rep.kind, rep.message = word, rest
            elif word in ("exit", "signal"):
                code, _, cpu = rest.partition(" ")
                rep.kind, rep.code, rep.cpu_s = word, int(code), float(cpu or 0)
        return rep


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


@dataclass(frozen=True)
class _Ended:
    """How a job ended and what it left: the parts its `SandboxResult` is made from."""

    report: _Report
    timed_out: bool
    runtime: float  # seconds of wall clock
    out: _Tail
    err: _Tail
    answer: bytes | None = None
    answer_reason: str = ""  # why the answer file was not taken ('' when it was, or there was none)


def _result(job: SandboxJob, ended: _Ended) -> SandboxResult:
    """The job's status, return code and one-line reason, from how it ended under its limits."""
    limits, report = job.limits, ended.report
    returncode: int | None
    if report.kind == "exit":
        returncode = report.code
    elif report.kind == "signal":
        returncode = -report.code
    else:
        returncode = None
    if ended.timed_out:
        status, reason = "timeout", f"timed out after {float(limits.timeout_s)} s"
    elif report.kind == "exit":
        status = "ok" if report.code == 0 else "error"
        reason = "" if report.code == 0 else f"exit code {report.code}"
    elif report.kind == "signal":
        status, reason = "killed", f"killed by {_signal_name(report.code)}"
        if report.code == signal.SIGXCPU or (report.code == signal.SIGKILL and report.cpu_s >= limits.cpu_s):
            reason += f" (CPU time limit of {limits.cpu_s} s)"
        elif report.code == signal.SIGXFSZ:
            reason += f" (file size limit of {limits.file_size_mb} MB)"
    elif report.kind == "execfail":
        status, reason = (
            "error",
            f"could not start {job.command[0]!r}: {report.message}",
        )
    else:  # only a kill stops a supervisor before it reports
        status = "killed"
        reason = "sandbox supervisor ended without a report (killed); all job processes killed"
    if ended.answer_reason:
        reason = f"{reason}; {ended.answer_reason}" if reason else ended.answer_reason
    return SandboxResult(
        status=status,
        returncode=returncode,
        answer=ended.answer,
        stdout_tail=ended.out.text(),
        stderr_tail=ended.err.text(),
        runtime_s=ended.runtime,
        reason=reason,
    )
