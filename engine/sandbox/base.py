"""Types shared by every sandbox backend.

A sandbox runs one command on one set of files and hands back what came out:
the answer file, the tail of the output, how it ended. Grading happens
outside, so nothing here interprets the output (a printed "score: 1.0" is
just text); the status is decided by how the process ended, nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Protocol, runtime_checkable

__all__ = [
    "JOB_LLM_SOCKET",
    "LLMEndpoint",
    "Sandbox",
    "SandboxJob",
    "SandboxLimits",
    "SandboxResult",
    "check_relative_path",
    "llm_env",
]

# Where the run's LLM gateway socket appears inside a bwrap or docker job.
JOB_LLM_SOCKET = "/run/clade/llm.sock"


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits for one job; backends enforce what they can (see each backend)."""

    timeout_s: float = 10.0  # wall clock; everything the job started is killed after it
    cpu_s: int = 10  # RLIMIT_CPU, per process
    memory_mb: int = 1024  # RLIMIT_AS, per process
    file_size_mb: int = 16  # RLIMIT_FSIZE, per file written
    processes: int = 64  # max processes/threads alive at once in the job
    output_bytes: int = 8192  # how much of the stdout / stderr tail is kept, each
    cpus: float = 1.0  # CPU share across the job's processes (docker; others run at full speed)

    def __post_init__(self) -> None:
        if not self.timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0, got {self.timeout_s!r}")
        for name in ("cpu_s", "memory_mb", "file_size_mb", "processes"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)!r}")
        if not self.cpus > 0:
            raise ValueError(f"cpus must be > 0, got {self.cpus!r}")
        if self.output_bytes < 0:
            raise ValueError(f"output_bytes must be >= 0, got {self.output_bytes!r}")


def check_relative_path(path: str, what: str = "path") -> PurePosixPath:
    """Return `path` as a PurePosixPath, or raise ValueError if it could leave the working directory.

    Job files and the answer file are named relative to a fresh directory; an
    absolute path or a '..' component would write or read outside it.
    """
    if not isinstance(path, str):
        raise TypeError(f"{what} must be a str, got {type(path).__name__}")
    if not path or "\x00" in path:
        raise ValueError(f"{what} {path!r} is empty or contains NUL")
    p = PurePosixPath(path)
    if p.is_absolute():
        raise ValueError(f"{what} {path!r} is absolute; give a path relative to the working directory")
    if ".." in p.parts:
        raise ValueError(f"{what} {path!r} contains '..'")
    if p.parts in ((), (".",)):
        raise ValueError(f"{what} {path!r} names the working directory itself")
    return p


@dataclass(frozen=True)
class LLMEndpoint:
    """How one job reaches the run's LLM gateway (engine/gateway): the gateway's Unix socket on the
    engine's machine and this evaluation's bearer token. The job sees them as CLADE_LLM_URL and
    CLADE_LLM_TOKEN; `process` gives the host path, `bwrap` and `docker` bind the socket alone at
    JOB_LLM_SOCKET (no network needed). No API key is ever part of it.

    With `--gateway-listen` the gateway also serves TCP: `url` (http:// or https://host:port) and, for
    TLS, `tls_cert` (the gateway's certificate, PEM, which the relay pins). A Ray worker that gets a job
    with a `url` relays a Unix socket of its own to it (engine.sandbox.relay), so the job still sees a
    Unix socket and no network."""

    socket_path: str
    token: str
    url: str = ""
    tls_cert: str = ""


def llm_env(endpoint: LLMEndpoint | None, socket_in_job: str | None = None) -> dict[str, str]:
    """The two variables a job gets for the gateway (none without an endpoint)."""
    if endpoint is None:
        return {}
    return {"CLADE_LLM_URL": f"unix://{socket_in_job or endpoint.socket_path}", "CLADE_LLM_TOKEN": endpoint.token}


@dataclass(frozen=True)
class SandboxJob:
    """One command to run on one set of files.

    `files` are written into a fresh working directory, `command` runs there,
    and `answer_file` is read back afterwards (at most `answer_limit` bytes).
    `llm`: the run's LLM gateway, for agents that call a model (None: no access).
    `hidden`: absolute host paths (directories or files) that must look empty inside
    the job, e.g. an installed benchmark's data with its tests and solutions: `bwrap`
    mounts an empty tmpfs over each, `docker` never has them (host paths are not
    in the image), `process` cannot hide anything (see process.py).
    """

    files: Mapping[str, bytes]
    command: Sequence[str]
    answer_file: str
    limits: SandboxLimits = SandboxLimits()  # frozen, so one shared default is safe
    answer_limit: int = 16 * 2**20
    llm: LLMEndpoint | None = None
    hidden: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for path in self.hidden:
            if not isinstance(path, str) or not path.startswith("/") or path.rstrip("/") == "":
                raise ValueError(f"hidden path {path!r} must be an absolute path below /")
        for name, content in self.files.items():
            check_relative_path(name, "job file")
            if not isinstance(content, (bytes, bytearray, memoryview)):
                raise TypeError(f"job file {name!r}: content must be bytes, got {type(content).__name__}")
        check_relative_path(self.answer_file, "answer_file")
        if isinstance(self.command, (str, bytes)) or not self.command:
            raise ValueError("command must be a non-empty sequence of arguments (argv), not a string")
        if self.answer_limit < 0:
            raise ValueError(f"answer_limit must be >= 0, got {self.answer_limit!r}")


@dataclass(frozen=True)
class SandboxResult:
    """How one job ended.

    status: 'ok' (exit 0), 'error' (non-zero exit, or could not start),
    'timeout' (wall limit hit), 'killed' (ended by a signal: a CPU limit,
    SIGSEGV, a self-kill, ...).
    """

    status: str
    returncode: int | None  # exit code, or -N when ended by signal N (subprocess convention)
    answer: bytes | None  # None if absent / not a regular file / outside / over the limit
    stdout_tail: str
    stderr_tail: str
    runtime_s: float
    reason: str = ""  # one human line when status != 'ok' or the answer is missing
    worker: str = ""  # where it ran when that is not this process's pool (a Ray node: "ray:<ip>/<node id>")

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@runtime_checkable
class Sandbox(Protocol):
    """A backend: runs jobs, several at once from one event loop."""

    name: str

    async def run(self, job: SandboxJob) -> SandboxResult: ...
