"""Job validation and backend selection."""

from __future__ import annotations

import subprocess
import sys

import pytest

ROOT = str(__import__("pathlib").Path(__file__).resolve().parents[3])

from engine.sandbox import (
    ProcessSandbox,
    Sandbox,
    SandboxJob,
    SandboxLimits,
    make_sandbox,
)


@pytest.mark.parametrize("bad", ["/etc/passwd", "../x", "a/../../x", "", ".", "a\x00b"])
def test_job_files_must_stay_inside(bad: str) -> None:
    with pytest.raises(ValueError):
        SandboxJob(files={bad: b"x"}, command=["true"], answer_file="a")


@pytest.mark.parametrize("bad", ["/tmp/answer", "../answer", "out/../../answer"])
def test_answer_file_must_stay_inside(bad: str) -> None:
    with pytest.raises(ValueError):
        SandboxJob(files={}, command=["true"], answer_file=bad)


def test_command_must_be_an_argv() -> None:
    with pytest.raises(ValueError):
        SandboxJob(files={}, command="python runner.py", answer_file="a")
    with pytest.raises(ValueError):
        SandboxJob(files={}, command=[], answer_file="a")


def test_limits_are_checked() -> None:
    with pytest.raises(ValueError):
        SandboxLimits(timeout_s=0)
    with pytest.raises(ValueError):
        SandboxLimits(processes=0)


def test_make_sandbox() -> None:
    sb = make_sandbox("process")
    assert isinstance(sb, ProcessSandbox) and sb.name == "process"
    assert isinstance(sb, Sandbox)
    with pytest.raises(ValueError, match="choose one of: auto, process"):
        make_sandbox("nope")


def test_importing_the_package_does_not_import_backends() -> None:
    code = "import sys, engine.sandbox; print('engine.sandbox.process' in sys.modules, 'asyncio' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert out.stdout.split() == ["False", "False"]
