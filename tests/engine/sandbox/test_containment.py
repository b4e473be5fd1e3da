"""Nothing a job starts outlives it: fork bombs, escaped daemons, cancellation.

Each containment test runs twice: with the per-job pids cgroup (when this
machine allows it) and without (the rlimit/process-group/subreaper fallback).
Fork bombs always run with a short timeout and a process cap.
"""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from sandbox_helpers import (
    PY,
    count_processes,
    new_marker,
    pids_with_marker,
    process_exists,
    run,
    script_job,
)

from engine.sandbox import ProcessSandbox, SandboxJob, SandboxLimits
from engine.sandbox import cgroup as cgroup_mod
from engine.sandbox.cgroup import PidsCgroups

CGROUPS = PidsCgroups().available
modes = pytest.mark.parametrize(
    "use_cgroup",
    [
        pytest.param(
            True,
            marks=pytest.mark.skipif(not CGROUPS, reason="no writable pids cgroup"),
        ),
        False,
    ],
    ids=["cgroup", "fallback"],
)


def written(path: Path) -> bool:
    """The job wrote its line to `path` (a whole line: it ends with a newline)."""
    return path.exists() and path.read_text().endswith("\n")


async def until(check: Callable[[], bool], what: str, limit_s: float = 120) -> None:
    """Wait for an event the job makes (`limit_s` only bounds a hang)."""
    end = time.monotonic() + limit_s
    while not check():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


def wait_for_file(path: Path, timeout: float = 60.0) -> str:  # a guard: it returns as soon as the line is there
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if path.exists() and path.read_text().endswith("\n"):
            return path.read_text()
        time.sleep(0.01)
    raise AssertionError(f"{path} never written")


@pytest.mark.slow
@pytest.mark.skipif(not CGROUPS, reason="an uncapped fork bomb as root is not safe to run")
def test_fork_bomb_is_capped_and_leaves_nothing() -> None:
    marker = new_marker()
    before = count_processes()
    res = run(script_job("""
        import os
        while True:
            try:
                os.fork()
            except OSError:
                pass
    """, args=(marker,), timeout_s=3, processes=32))  # fmt: skip
    assert res.status in ("timeout", "killed", "error"), res
    assert res.runtime_s < 6
    assert pids_with_marker(marker) == []
    # Other work may run on this machine meanwhile; a leaked bomb would leave >= 32 processes.
    assert count_processes() < before + 16


def test_cgroup_caps_process_count() -> None:
    if not CGROUPS:
        pytest.skip("no writable pids cgroup")
    res = run(script_job("""
        import os, time
        kids = 0
        for _ in range(40):
            try:
                if os.fork() == 0:
                    time.sleep(30)
                    os._exit(0)
                kids += 1
            except OSError:
                break
        open('answer.txt', 'w').write(str(kids))
    """, processes=10, timeout_s=10))  # fmt: skip
    assert res.status == "ok", res
    assert res.answer == b"9"  # 10 tasks in all, the runner included
    assert res.runtime_s < 5  # the sleeping children were killed when the runner exited


@pytest.mark.slow
@modes
def test_process_tree_bomb_is_killed_on_timeout(use_cgroup: bool) -> None:
    # A bounded bomb (127 processes, some in their own sessions), safe without a cap.
    marker = new_marker()
    res = run(script_job("""
        import os, time
        for depth in range(6):
            for _ in range(2):
                if os.fork() == 0:
                    if depth % 2:
                        os.setsid()
                    break
            else:
                break
        time.sleep(60)
    """, args=(marker,), timeout_s=2, processes=200), ProcessSandbox(use_cgroup=use_cgroup))  # fmt: skip
    assert res.status == "timeout"
    assert pids_with_marker(marker) == []


@modes
def test_daemonized_grandchild_does_not_survive(use_cgroup: bool, tmp_path: Path) -> None:
    pidfile = tmp_path / "daemon.pid"
    res = run(script_job(f"""
        import os, sys, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                # the daemon: own session, parent gone, stdout still the sandbox's pipe
                with open({str(pidfile)!r}, 'w') as f:
                    f.write(f"{{os.getpid()}}\\n")
                time.sleep(60)
                os._exit(0)
            os._exit(0)
        while not os.path.exists({str(pidfile)!r}):
            time.sleep(0.01)
        time.sleep(0.05)
        open('answer.txt', 'w').write('started')
    """, timeout_s=10), ProcessSandbox(use_cgroup=use_cgroup))  # fmt: skip
    assert res.status == "ok", res
    assert res.answer == b"started"
    assert res.runtime_s < 5
    pid = int(wait_for_file(pidfile))
    assert not process_exists(pid)  # not running, and not a zombie either


@modes
def test_short_lived_orphans_leave_no_zombies(use_cgroup: bool, tmp_path: Path) -> None:
    pidfile = tmp_path / "orphans.pid"
    run(script_job(f"""
        import os, time
        pids = []
        for _ in range(5):
            if os.fork() == 0:        # child forks a grandchild and exits: grandchild is an orphan
                gc = os.fork()
                if gc == 0:
                    time.sleep(0.05)  # ends on its own, while the job still runs
                    os._exit(0)
                with open({str(pidfile)!r}, 'a') as f:
                    f.write(f"{{gc}}\\n")
                os._exit(0)
        time.sleep(0.5)
    """), ProcessSandbox(use_cgroup=use_cgroup))  # fmt: skip
    pids = [int(x) for x in pidfile.read_text().split()]
    assert len(pids) == 5
    assert [p for p in pids if process_exists(p)] == []


@modes
def test_cancellation_kills_the_job_and_removes_the_directory(use_cgroup: bool, tmp_path: Path) -> None:
    info = tmp_path / "info"
    job = script_job(f"""
        import os, time
        if os.fork() == 0:
            os.setsid()
            with open({str(info)!r} + '.child', 'w') as f:
                f.write(f"{{os.getpid()}}\\n")
            time.sleep(60)
            os._exit(0)
        with open({str(info)!r}, 'w') as f:
            f.write(f"{{os.getpid()}} {{os.getcwd()}}\\n")
        time.sleep(60)
    """, timeout_s=30)  # fmt: skip

    async def cancel_after_start() -> None:
        task = asyncio.create_task(ProcessSandbox(use_cgroup=use_cgroup).run(job))
        await until(lambda: written(info) and written(Path(str(info) + ".child")), "the job and its child started")
        t0 = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert time.monotonic() - t0 < 3

    asyncio.run(cancel_after_start())
    pid_s, cwd = wait_for_file(info).split()
    child = int(wait_for_file(Path(str(info) + ".child")))
    assert not process_exists(int(pid_s))
    assert not process_exists(child)
    assert not os.path.exists(cwd)


def test_cancellation_while_timing_out_still_cleans_up(tmp_path: Path) -> None:
    # Cancel twice: the second cancel lands while the sandbox is stopping the job.
    info = tmp_path / "info"
    job = script_job(f"""
        import os, time
        with open({str(info)!r}, 'w') as f:
            f.write(f"{{os.getpid()}} {{os.getcwd()}}\\n")
        time.sleep(60)
    """, timeout_s=30)  # fmt: skip

    async def go() -> None:
        task = asyncio.create_task(ProcessSandbox().run(job))
        await until(lambda: written(info), "the job started")
        task.cancel()
        await asyncio.sleep(0)  # the task runs up to its first await in the clean-up: stopping the supervisor
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    pid_s, cwd = wait_for_file(info).split()
    end = time.monotonic() + 30  # after a hard kill, init reaps; give it a moment (a busy machine: a long one)
    while process_exists(int(pid_s)) and time.monotonic() < end:
        time.sleep(0.02)
    assert not process_exists(int(pid_s))
    assert not os.path.exists(cwd)


def test_job_killing_its_supervisor_is_still_contained(tmp_path: Path) -> None:
    info = tmp_path / "info"
    res = run(script_job(f"""
        import os, signal, time
        if os.fork() == 0:
            with open({str(info)!r}, 'w') as f:
                f.write(f"{{os.getpid()}}\\n")
            time.sleep(60)
            os._exit(0)
        while not os.path.exists({str(info)!r}):
            time.sleep(0.01)
        os.kill(os.getppid(), signal.SIGKILL)
        time.sleep(60)
    """, timeout_s=10))  # fmt: skip
    assert res.status == "killed"
    assert "supervisor ended without a report" in res.reason
    assert res.runtime_s < 5
    child = int(wait_for_file(info))
    end = time.monotonic() + 30  # orphans of a killed supervisor are reaped by init (a guard: it ends once they are)
    while process_exists(child) and time.monotonic() < end:
        time.sleep(0.05)
    assert not process_exists(child)


def test_fallback_is_announced_once(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    class NoCgroups:
        available = False
        reason = "testing"

    sandbox = ProcessSandbox()
    monkeypatch.setattr(sandbox, "_cgroups", NoCgroups())
    job = SandboxJob(
        files={},
        command=[PY, "-c", "pass"],
        answer_file="a",
        limits=SandboxLimits(timeout_s=5),
    )
    with caplog.at_level(logging.WARNING, logger="engine.sandbox.process"):
        assert run(job, sandbox).status == "ok"
        assert run(job, sandbox).status == "ok"
    messages = [r.getMessage() for r in caplog.records if "pids cgroup unavailable (testing)" in r.getMessage()]
    assert len(messages) == 1


ENGINE = """
import asyncio, sys
sys.path.insert(0, ROOT)
from engine.sandbox import ProcessSandbox, SandboxJob, SandboxLimits
code = f'''
import os, time
if os.fork() == 0:
    os.setsid()
    with open({INFO!r} + ".child", "w") as f:
        f.write(str(os.getpid()) + "\\\\n")
    time.sleep(60)
    os._exit(0)
with open({INFO!r}, "w") as f:
    f.write(str(os.getpid()) + " " + os.getcwd() + "\\\\n")
time.sleep(60)
'''.encode()
job = SandboxJob({"runner.py": code}, [sys.executable, "runner.py"], "a", SandboxLimits(timeout_s=60))
asyncio.run(ProcessSandbox(base_dir=BASE).run(job))
"""


def test_engine_killed_mid_job_takes_the_job_along(tmp_path: Path) -> None:
    """PR_SET_PDEATHSIG on the supervisor: an engine that dies, even by SIGKILL, leaves no job
    behind; the next engine removes its working directory and cgroup."""
    info, base = tmp_path / "info", tmp_path / "work"
    base.mkdir()
    root = str(Path(__file__).resolve().parents[3])
    script = f"ROOT = {root!r}\nINFO = {str(info)!r}\nBASE = {str(base)!r}\n" + ENGINE
    engine = subprocess.Popen([PY, "-c", script])
    try:
        pid_s, cwd = wait_for_file(info).split()
        child = int(wait_for_file(Path(str(info) + ".child")))
    finally:
        engine.kill()
        engine.wait()
    end = time.monotonic() + 30  # a guard: the loop ends as soon as both are gone
    while (process_exists(int(pid_s)) or process_exists(child)) and time.monotonic() < end:
        time.sleep(0.02)
    assert not process_exists(int(pid_s))
    assert not process_exists(child)

    assert os.path.isdir(cwd)  # the engine died before it could clean up...
    ProcessSandbox(base_dir=base)._remove_stale_workdirs()  # ...the next engine does it
    assert not os.path.exists(cwd)
    if CGROUPS:
        parent = cgroup_mod._find_pids_parent()[0]
        PidsCgroups._remove_stale(parent)
        assert not [n for n in os.listdir(parent) if n.startswith(f"clade-{engine.pid}-")]
