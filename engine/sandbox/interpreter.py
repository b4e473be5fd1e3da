"""The Python a sandbox job runs: the engine's own, or another one the user chose (`--task-python`).

A task folder written for OpenEvolve or ShinkaEvolve often imports its engine
(`from openevolve.evaluation_result import EvaluationResult`); installing that
engine beside Clade would downgrade Clade's own dependencies, so the task's
candidate and evaluator may run under another venv's interpreter instead.
`find_python` turns what the user gave (an executable, or a venv folder) into
an executable path; `inspect_python` runs it once and reads its version and
its prefixes (what `bwrap` must bind for it to work: the venv's prefix and the
base interpreter's one, which a venv's `bin/python` usually links to).
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass

__all__ = ["MIN_VERSION", "TargetPython", "find_python", "inspect_python"]

MIN_VERSION = (3, 8)
_PROBE = (
    "import json, os, sys; print(json.dumps({'version': list(sys.version_info[:2]), 'prefixes': "
    "[sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, "
    "os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))]}))"
)


@dataclass(frozen=True)
class TargetPython:
    executable: str  # absolute, not resolved: a venv's bin/python stays the venv's
    version: tuple[int, int]
    prefixes: tuple[str, ...]  # sys.prefix, sys.base_prefix, ... as that interpreter reports them


def find_python(path: str, relative_to: str | None = None) -> str:
    """The executable `path` names (a venv folder: its bin/python), absolute; ValueError (one line) if none."""
    given = os.path.expanduser(path.strip())
    if relative_to is not None and not os.path.isabs(given):
        given = os.path.join(relative_to, given)
    given = os.path.abspath(given)
    if os.path.isdir(given):
        inside = os.path.join(given, "bin", "python")
        if not os.path.exists(inside):
            raise ValueError(f"{given} is a folder but not a venv: it has no bin/python")
        given = inside
    if not os.path.exists(given):
        raise ValueError(f"{given} not found")
    if not os.path.isfile(given) or not os.access(given, os.X_OK):
        raise ValueError(f"{given} is not an executable file")
    return given


def inspect_python(executable: str, timeout: float = 20.0) -> TargetPython:
    """Run `executable` once: its version and prefixes; ValueError (one line) unless it is a Python >= 3.8."""
    try:
        proc = subprocess.run(
            [executable, "-E", "-s", "-c", _PROBE],
            check=False,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise ValueError(f"{executable} did not answer within {timeout:g} s: not a usable Python") from None
    except OSError as exc:
        raise ValueError(f"{executable} could not run: {exc.strerror or exc}") from None
    try:
        data = json.loads(proc.stdout.strip().splitlines()[-1])
        version = (int(data["version"][0]), int(data["version"][1]))
        prefixes = tuple(str(p) for p in data["prefixes"])
    except (ValueError, IndexError, KeyError, TypeError):
        lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
        said = f": {lines[-1][:200]}" if lines else ""
        raise ValueError(
            f"{executable} is not a Python interpreter Clade can use (exit {proc.returncode}{said})"
        ) from None
    if version < MIN_VERSION:
        raise ValueError(
            f"{executable} is Python {version[0]}.{version[1]}; the sandbox needs Python "
            f"{MIN_VERSION[0]}.{MIN_VERSION[1]} or newer"
        )
    return TargetPython(executable, version, prefixes)
