"""The `bwrap` sandbox: the `process` sandbox, with the job inside bubblewrap namespaces.

A job runs exactly as in `ProcessSandbox` (same supervisor, rlimits, pids
cgroup, wall-clock timeout, bounded output, cancellation, fresh working
directory, allow-listed environment); only the command the supervisor starts
is wrapped in a ``bwrap`` invocation (Debian package `bubblewrap`). Inside:

- no network: a new, empty network namespace (loopback down, no interface), so
  neither the host's 127.0.0.1 nor any outside address can be reached;
- new pid, ipc, uts and (when possible) user and cgroup namespaces: the job sees
  only its own processes, and when its main process ends the namespace's init
  dies and the kernel kills everything left in it (daemons included);
- a filesystem built from nothing: read-only binds of /usr (and the /bin,
  /sbin, /lib* links or directories), a few files of /etc that programs need
  (dynamic linker cache, passwd/group, alternatives, locale/time zone), and the
  Python interpreter's prefixes (sys.prefix, sys.base_prefix, ...) so that
  ``sys.executable`` and its site-packages work (and those of the task's own
  interpreter, `python=`, such as a venv and its base Python), and what the
  task's compiler found on the engine's PATH reads (`toolchains=`,
  engine/lang/toolchain.py: rustup's `~/.cargo/bin`, `settings.toml` and
  toolchain, a GOROOT, a conda prefix); a fresh /proc and a minimal
  /dev; a private, size-capped tmpfs on /tmp. The host's /tmp, /root, home
  directories, the repository, the run's archive and holdout data are not
  mounted, so they can be neither read nor written;
- the job's working directory bound read-write at `JOB_DIR` (/job), the only
  host directory it can write; it is the cwd, HOME and TMPDIR;
- the root itself read-only (nothing can be created beside the mounts);
- a job's `hidden` paths (an installed benchmark's data, such as HumanEval's
  tests and canonical solutions) covered by an empty tmpfs (a file: by
  /dev/null);
- for an agent that calls a model, the run's LLM gateway socket (and only that
  socket) bound at /run/clade/llm.sock, so the agent reaches the gateway with
  the network namespace still empty;
- its own user namespace where the machine allows one, as uid/gid 65534,
  without the right to make further user namespaces (as host root the job's
  files are still owned by root outside, and it holds no capability);
- all capabilities dropped, a new session (no TIOCSTI to the engine's
  terminal), and ``--die-with-parent``: if the supervisor dies, so does the job.

One difference from `process`: bwrap reports a job killed by signal N as exit
code 128+N; such exit codes are read back as that signal, so a job that
*exits* with 137 on purpose is reported as killed by SIGKILL.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .base import JOB_LLM_SOCKET, SandboxJob, llm_env
from .jobenv import _job_env
from .process import ProcessSandbox
from .report import _Report

if TYPE_CHECKING:
    from engine.lang.toolchain import Toolchain

__all__ = ["JOB_DIR", "BwrapSandbox", "bwrap_available", "bwrap_path"]

JOB_DIR = "/job"
_TMP_SIZE_MB = 64  # cap of the private /tmp (a tmpfs: RAM); the working directory is for real files

# Top-level system paths bound read-only when present (a symlink is recreated as a symlink).
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# What of /etc programs commonly need; the rest (shadow, ssh keys, ...) stays out.
_ETC = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "alternatives",
    "passwd",
    "group",
    "nsswitch.conf",
    "localtime",
    "timezone",
    "locale.alias",
    "locale.conf",
    "mime.types",
    "os-release",
)
_SIGNAL_EXIT_BASE = 128
_NSIG = 65


def bwrap_path() -> str | None:
    """The bwrap executable on PATH, or None."""
    return shutil.which("bwrap")


# User-namespace options, strongest first: the job runs as uid/gid 65534 in its own user
# namespace and cannot make further ones; older bwrap lacks --disable-userns; where user
# namespaces are unavailable (setuid bwrap, a sysctl) bwrap runs without one.
_USERNS_VARIANTS: tuple[tuple[str, ...], ...] = (
    ("--unshare-user", "--uid", "65534", "--gid", "65534", "--disable-userns"),
    ("--unshare-user", "--uid", "65534", "--gid", "65534"),
    (),
)


@functools.cache
def _probe(exe: str) -> tuple[tuple[str, ...] | None, str]:
    """(the user-namespace options that work, '') or (None, why nothing works)."""
    why = ""
    for userns in _USERNS_VARIANTS:
        argv = [exe, *_base_args(userns), "--remount-ro", "/", "--", _true_path()]
        try:
            proc = subprocess.run(
                argv,
                check=False,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                timeout=10,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            return None, f"{exe} could not run: {exc}"
        if proc.returncode == 0:
            return userns, ""
        msg = proc.stderr.decode(errors="replace").strip().splitlines()
        why = msg[-1] if msg else f"exit {proc.returncode}"
    return None, f"bwrap cannot create namespaces here: {why}"


def bwrap_available() -> tuple[bool, str]:
    """(True, '') if bwrap is installed and can create the sandbox's namespaces; else (False, why)."""
    exe = bwrap_path()
    if exe is None:
        return False, "bwrap not installed (Debian package 'bubblewrap')"
    userns, why = _probe(exe)
    return userns is not None, why


def _true_path() -> str:
    return shutil.which("true", path="/usr/bin:/bin") or "/usr/bin/true"


def _ro_system_args() -> list[str]:
    args: list[str] = []
    for path in _SYSTEM:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for name in _ETC:
        path = os.path.join("/etc", name)
        if os.path.lexists(path):
            args += ["--ro-bind-try", path, path]
    return args


def _python_prefixes(extra: tuple[str, ...] = ()) -> list[str]:
    """Directories holding the interpreter and its libraries, outermost first, deduplicated.

    The engine's, and `extra`: the prefixes of the task's own interpreter
    (`--task-python`: its venv and the base Python it links to). Prefixes
    already under a bound system directory (/usr/...) are skipped; so is '/',
    which would expose the whole host.
    """
    candidates = {
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        sys.base_exec_prefix,
        os.path.dirname(os.path.dirname(os.path.realpath(sys.executable))),
        *extra,
    }
    found: list[str] = []
    for raw in sorted(candidates, key=len):
        p = os.path.realpath(raw)
        for q in {raw, p}:
            if q in ("/", "") or not os.path.isdir(q):
                continue
            if any(q == s or q.startswith(s + "/") for s in _SYSTEM if os.path.isdir(s) and not os.path.islink(s)):
                continue
            if any(q == f or q.startswith(f + "/") for f in found):
                continue
            found.append(q)
    return found


def _base_args(userns: tuple[str, ...], tmp_size_mb: int = _TMP_SIZE_MB, prefixes: tuple[str, ...] = ()) -> list[str]:
    args = [
        "--unshare-all",  # user (when possible), ipc, pid, net, uts, cgroup (when possible)
        *userns,
        "--die-with-parent",
        "--new-session",
        "--cap-drop", "ALL",
        "--hostname", "sandbox",
        *_ro_system_args(),
        "--proc", "/proc",
        "--dev", "/dev",
        "--size", str(tmp_size_mb * 2**20), "--tmpfs", "/tmp",
    ]  # fmt: skip
    for prefix in _python_prefixes(prefixes):
        args += ["--ro-bind", prefix, prefix]
    return args


def _toolchain_args(toolchains: Sequence[Toolchain]) -> list[str]:
    """The run's compilers outside the system's directories, bound read-only at their own paths (a rustup
    toolchain: `~/.cargo/bin`, `settings.toml` and the toolchain; a GOROOT; a conda prefix): the job's PATH is
    the engine's, so the compiler found at run start is the one a job runs. One that is gone is skipped."""
    args: list[str] = []
    for chain in toolchains:
        for path in chain.binds:
            if path not in ("", "/"):
                args += ["--ro-bind-try", path, path]
    return args


class BwrapSandbox(ProcessSandbox):
    """ProcessSandbox whose jobs run inside bubblewrap; see the module docstring."""

    name = "bwrap"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Same arguments as ProcessSandbox. RuntimeError if bwrap is missing or cannot run here, or if
        `python` (the task's own interpreter) is not a usable Python; its prefixes are bound read-only."""
        super().__init__(*args, **kwargs)
        prefixes: tuple[str, ...] = ()
        if self.python is not None:
            from .interpreter import inspect_python

            try:
                prefixes = inspect_python(self.python).prefixes
            except ValueError as exc:
                raise RuntimeError(f"the task's Python: {exc}") from None
        exe = bwrap_path()
        if exe is None:
            raise RuntimeError("bwrap sandbox unavailable: bwrap not installed (Debian package 'bubblewrap')")
        userns, why = _probe(exe)
        if userns is None:
            raise RuntimeError(f"bwrap sandbox unavailable: {why}")
        self._bwrap = exe
        self._args = _base_args(userns, prefixes=prefixes) + _toolchain_args(self.toolchains)

    def _job_command(self, job: SandboxJob, workdir: str) -> tuple[list[str], dict[str, str]]:
        env = {**_job_env(JOB_DIR, self.python), **self._toolchain_env(), **llm_env(job.llm, JOB_LLM_SOCKET)}
        extra: list[str] = []
        for path in job.hidden:  # e.g. an installed benchmark's data: an empty, private tmpfs over it
            if os.path.isdir(path):
                extra += ["--tmpfs", path]
            elif os.path.lexists(path):
                extra += ["--ro-bind", "/dev/null", path]
        if job.llm is not None:  # the gateway's socket alone, read-write; the network stays empty
            extra += ["--bind", job.llm.socket_path, JOB_LLM_SOCKET]
        argv = [
            self._bwrap,
            *self._args,
            *extra,
            "--bind", workdir, JOB_DIR,
            "--remount-ro", "/",  # last: every mount point exists by now
            "--chdir", JOB_DIR,
            "--", *job.command,
        ]  # fmt: skip
        return argv, env

    def _job_report(self, report: _Report) -> _Report:
        """bwrap exits 128+N when the job was killed by signal N: report it as that signal."""
        if report.kind == "exit" and _SIGNAL_EXIT_BASE < report.code < _SIGNAL_EXIT_BASE + _NSIG:
            return dataclasses.replace(report, kind="signal", code=report.code - _SIGNAL_EXIT_BASE)
        return report
