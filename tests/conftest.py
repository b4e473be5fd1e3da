"""Shared fixtures: small instance files and a way to run the CLI as a user does; how tests share the machine
(tests/parallel.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
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
    parallel.configure(config)


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
