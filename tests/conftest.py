"""Shared fixtures: small instance files and a way to run the CLI as a user does; how tests share the machine
(tests/parallel.py)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests import parallel
from tests.parallel import pytest_collection_modifyitems, pytest_runtest_protocol  # noqa: F401 - hooks

REPO = Path(__file__).resolve().parents[1]


def pytest_configure(config: pytest.Config) -> None:
    """SIGINT back to its default, as a terminal's foreground command has it.

    Several tests send SIGINT to a command they start, as Ctrl-C does. A shell without job control (a script
    that runs `.ci/run &`, nohup, some CI runners) starts a background job with SIGINT ignored (POSIX), an
    ignored signal stays ignored through exec, and Python then never raises KeyboardInterrupt: the commands
    would run on as if no Ctrl-C came. A handler here (not SIG_IGN) is reset to the default in every child.
    """
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    leave_docker_to_the_docker_tests()
    parallel.configure(config)


def leave_docker_to_the_docker_tests() -> None:
    """`--sandbox auto` in this suite chooses between bwrap and process, with or without a Docker daemon.

    With a daemon, auto rightly picks docker (engine/sandbox/__init__.py): every search of the suite that takes
    the default would run in containers, at five times a bwrap job's cost (scripts/bench_sandbox.py), and the
    suite would take twice its ten minutes on two cores. The docker tests (`-m docker`) ask for docker by name or
    clear this variable, and cover what auto's docker choice does: the default search at budget 40 in
    containers, the hostile agents, a C++ folder, auto's choice itself. Set the variable yourself to run the
    whole suite another way (`CLADE_AUTO_SANDBOXES=docker,bwrap,process pytest`).
    """
    from engine.sandbox import AUTO_ORDER_VARIABLE

    os.environ.setdefault(AUTO_ORDER_VARIABLE, "bwrap,process")


def small_instances(path: Path, n_dev: int = 4, n_holdout: int = 2, n_items: int = 120, seed: int = 0) -> Path:
    """A JSON instances file of OR-style instances small enough for fast end-to-end tests."""
    rng = np.random.default_rng(seed)
    data = {}
    for split, count in (("dev", n_dev), ("holdout", n_holdout)):
        for i in range(count):
            data[f"{split}{i}"] = {"capacity": 150, "items": rng.integers(20, 101, n_items).tolist(), "split": split}
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def instances_file(tmp_path) -> Path:
    return small_instances(tmp_path / "instances.json")


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="200")
    return subprocess.run(
        [sys.executable, "-m", "engine.search", *args],
        cwd=cwd or REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def process_state(pid: int) -> str:
    """The kernel's one-letter state of a process (R, S, T stopped, Z ended, ...); '' once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""


class Hold:
    """A running search held still (SIGSTOP) while a test reads it, then let go (SIGCONT): held, it cannot end,
    however long the readers take, and what it stores is what it would have stored anyway (its sandboxed jobs
    run on and wait for it; give it a `--timeout` far above an evaluation's, since its clock runs on)."""

    def __init__(self, process: subprocess.Popen) -> None:
        self.process, self.held = process, False

    def stop(self) -> bool:
        """Hold it; False (and nothing held) if it has ended already."""
        if self.process.poll() is not None:
            return False
        os.kill(self.process.pid, signal.SIGSTOP)
        while (state := process_state(self.process.pid)) not in ("T", "t", "Z", ""):
            time.sleep(0.01)
        self.held = True
        return state in ("T", "t")

    def go_on(self) -> None:
        if self.held:
            self.held = False
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.process.pid, signal.SIGCONT)


@contextlib.contextmanager
def paused(process: subprocess.Popen) -> Iterator[bool]:
    """`Hold` for a block: yields whether the search was running (and is now held)."""
    hold = Hold(process)
    try:
        yield hold.stop()
    finally:
        hold.go_on()


# ----- Polyglot (tests/tasks/polyglot_support.py) ---------------------------------------------------
@pytest.fixture
def polyglot_dir(monkeypatch) -> Path:
    """CLADE_POLYGLOT_DIR at the shared copy (as a user points at their own), for this test."""
    from tests.tasks.polyglot_support import HAVE, SHARED, WHY

    if not HAVE:
        pytest.skip(WHY)
    monkeypatch.setenv("CLADE_POLYGLOT_DIR", str(SHARED))
    return SHARED


@pytest.fixture
def docker_polyglot(polyglot_dir):
    """A docker sandbox of the Polyglot image (built from Debian's packages on first use), or a skip saying why."""
    from engine.sandbox import make_sandbox
    from engine.sandbox.docker_build import POLYGLOT_IMAGE
    from engine.sandbox.docker_daemon import docker_available

    ok, why = docker_available(POLYGLOT_IMAGE)
    if not ok:
        pytest.skip(f"docker: {why}")
    from tasks.polyglot.task import PolyglotTask
    from tests.tasks.polyglot_support import SAMPLE

    task = PolyglotTask(instances_path=",".join(SAMPLE))
    return make_sandbox("docker", image=POLYGLOT_IMAGE, toolchains=task.toolchains())
