"""Readers of a running search yield the CPU to it (engine/runinfo/yielding.py): their work runs in a session of
its own at autogroup nice 19, exit codes and Ctrl-C pass through, and the runs CLI does it only when it reads a
running search (or serves the live page)."""

from __future__ import annotations

import argparse
import importlib.util
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from archive.live import LIVE_FILE
from engine.runinfo import yielding
from engine.runinfo.cli import reads_a_running_search
from tests.conftest import REPO

needs_autogroup = pytest.mark.skipif(
    not yielding.AUTOGROUP.exists(), reason="no /proc/self/autogroup: not Linux, or a kernel without autogroup"
)

PROBE = textwrap.dedent("""
    import os, sys, time
    from engine.runinfo.yielding import yielding
    parent_session = os.getsid(0)
    def work():
        if sys.argv[1] == "sleep":
            print("sleeping", flush=True)
            time.sleep(600)  # far longer than the test waits: only the Ctrl-C ends it
        print(parent_session != os.getsid(0), open("/proc/self/autogroup").read().split()[-1], os.nice(0))
        return 7
    sys.exit(yielding(work))
""")


def probe(mode: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", PROBE, mode],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=False,
    )


@needs_autogroup
def test_the_work_runs_in_a_session_of_its_own_at_the_lowest_priority_and_its_code_comes_back():
    done = probe("report")
    out, err = done.communicate(timeout=60)
    assert done.returncode == 7, err
    assert out.split() == ["True", "19", "19"], out  # another session, its autogroup at 19, itself at 19
    assert os.nice(0) < 19  # and this process (the one that ran the probe) is untouched


@needs_autogroup
def test_ctrl_c_reaches_the_work_and_the_command_exits_130():
    running = probe("sleep")
    assert running.stdout.readline().strip() == "sleeping"
    began = time.monotonic()
    running.send_signal(signal.SIGINT)  # the terminal sends it to the command, not to the work's new session
    running.communicate(timeout=300)  # the work runs at nice 19: on a busy machine it takes its time to end
    assert running.returncode == 130 and time.monotonic() - began < 300


def test_without_a_real_stdout_the_work_runs_here(capsys):
    assert yielding.yielding(lambda: print("here", os.getpid()) or 3) == 3
    assert capsys.readouterr().out.split() == ["here", str(os.getpid())]


def args(command: str, **kw) -> argparse.Namespace:
    return argparse.Namespace(command=command, run_dir=kw.pop("run_dir"), **kw)


def test_the_runs_cli_yields_only_for_a_running_search(tmp_path: Path):
    done, running = tmp_path / "done", tmp_path / "running"
    for run in (done, running):
        run.mkdir()
        (run / "archive.duckdb").write_bytes(b"")
    (running / LIVE_FILE).write_bytes(b"")  # a running search keeps its live copy beside its archive
    d = str(tmp_path)
    assert reads_a_running_search(args("show", run="running", run_dir=d))
    assert not reads_a_running_search(args("show", run="done", run_dir=d))
    assert not reads_a_running_search(args("sql", run="no-such-run", run_dir=d))  # the command says what is wrong
    assert reads_a_running_search(args("compare", runs=["done", "running"], run_dir=d))
    assert not reads_a_running_search(args("compare", runs=["done", "done"], run_dir=d))
    assert reads_a_running_search(args("list", folder=d, run_dir="runs"))
    (running / LIVE_FILE).unlink()
    assert not reads_a_running_search(args("list", folder=d, run_dir="runs"))
    assert not reads_a_running_search(args("serve", runs=[], run_dir=d))  # it yields itself, once started


@needs_autogroup
@pytest.mark.skipif(
    importlib.util.find_spec("starlette") is None or importlib.util.find_spec("uvicorn") is None,
    reason="the live page needs the live extra (pip install -e '.[live]')",
)
def test_the_live_page_serves_from_a_lowest_priority_session_and_stops_on_ctrl_c(tmp_path: Path):
    server, child = _serve(tmp_path)
    deadline = time.monotonic() + 20
    try:
        while (
            Path(f"/proc/{child}/autogroup").read_text().split()[-1] != "19"
        ):  # past setsid and the change (made last)
            assert time.monotonic() < deadline, Path(f"/proc/{child}/autogroup").read_text()
            time.sleep(0.05)
        assert int(Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[16]) == 19  # its nice
    finally:
        server.send_signal(signal.SIGINT)
        out, err = server.communicate(timeout=30)
    assert server.returncode == 0, err
    assert "Stopped." in out


@needs_autogroup
@pytest.mark.skipif(
    importlib.util.find_spec("starlette") is None or importlib.util.find_spec("uvicorn") is None,
    reason="the live page needs the live extra (pip install -e '.[live]')",
)
def test_the_pages_server_ends_when_its_command_is_killed(tmp_path: Path):
    server, child = _serve(tmp_path)
    server.kill()  # SIGKILL: nothing is passed on, the kernel's parent-death signal ends the server
    server.communicate(timeout=30)
    deadline = time.monotonic() + 20
    while Path(f"/proc/{child}").exists() and _state(child) != "Z":
        assert time.monotonic() < deadline, f"the page's server {child} outlived its command"
        time.sleep(0.05)


def _serve(folder: Path) -> tuple[subprocess.Popen, str]:
    """`runs serve FOLDER` started, and the pid of the process it serves from."""
    server = subprocess.Popen(
        [sys.executable, "-m", "engine.runs", "serve", str(folder), "--port", "0"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert "Serving" in server.stdout.readline()
    deadline = time.monotonic() + 20  # it forks once started: the line comes first
    while not (children := Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()):
        assert time.monotonic() < deadline, "the page never forked its lowest-priority server"
        time.sleep(0.05)
    assert len(children) == 1, children
    return server, children[0]


def _state(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return "gone"
