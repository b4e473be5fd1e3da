"""A whole search through the CLI with `--executor ray` on a local Ray: same archive invariants as a local run."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from archive.store import Archive
from engine.sandbox.ray_executor import ray_available
from tests.conftest import REPO, run_cli, small_instances

RAY_OK, RAY_WHY = ray_available()
pytestmark = [pytest.mark.ray, pytest.mark.skipif(not RAY_OK, reason=RAY_WHY)]

BUDGET = 30  # the kill comes at the first busy worker: a longer run proves no more


def parents() -> dict[int, int]:
    found = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    found[int(name)] = int(f.read().rpartition(")")[2].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    return found


def ray_tasks_under(root: int) -> list[int]:
    """Ray worker processes below `root` that are running an evaluation right now (ray::_run_job)."""
    ppid = parents()
    busy = []
    for pid in ppid:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if not f.read().startswith(b"ray::_run_job"):
                    continue
        except OSError:
            continue
        up = pid
        while up > 1 and up != root:
            up = ppid.get(up, 0)
        if up == root:
            busy.append(pid)
    return busy


@pytest.mark.slow
def test_a_search_on_local_ray_keeps_the_budget_exact_through_a_dead_worker(tmp_path):
    instances = small_instances(tmp_path / "instances.json", n_items=60)
    runs = tmp_path / "runs"
    env = dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="200", LITELLM_LOCAL_MODEL_COST_MAP="True")
    cli = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "engine.search",
            "--executor",
            "ray",
            "--budget",
            str(BUDGET),
            "--workers",
            "2",
            "--sandbox",
            "process",
            "--seed",
            "1",
            "--instances",
            str(instances),
            "--run-dir",
            str(runs),
            "--quiet",
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    killed = None
    try:
        deadline = time.monotonic() + 120
        while killed is None and cli.poll() is None and time.monotonic() < deadline:
            busy = ray_tasks_under(cli.pid)
            if busy:  # a worker node dies mid-evaluation: that evaluation is retried, and recorded once
                killed = busy[0]
                os.kill(killed, signal.SIGKILL)
            time.sleep(0.05)
        out, err = cli.communicate(timeout=180)
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.communicate()
    assert cli.returncode == 0, err + out
    assert killed is not None, "no Ray worker was seen running an evaluation"
    assert "on Ray (local)" in out  # the run says where its evaluations ran
    (run,) = runs.iterdir()
    with Archive.open(run, read_only=True) as archive:
        assert archive.query("SELECT count(*) FROM evaluations WHERE split = 'dev'") == [(BUDGET,)]
        assert (
            archive.query(
                'SELECT node_id, instance_id, split, "repeat", count(*) FROM evaluations '
                "GROUP BY ALL HAVING count(*) > 1"
            )
            == []
        )
        # the killed evaluation was retried, not lost: no result says its Ray worker died
        assert archive.query("SELECT count(*) FROM evaluations WHERE feedback LIKE '%Ray worker%'") == [(0,)]
        assert archive.query("SELECT count(*) FROM events WHERE kind = 'evaluate'") == [(BUDGET,)]
        assert archive.query("SELECT status FROM runs") == [("finished",)]
        assert archive.query(
            "SELECT count(*) FROM evaluations e LEFT JOIN nodes n ON n.id = e.node_id "
            "WHERE n.id IS NULL OR n.status <> 'valid'"
        ) == [(0,)]
        assert archive.query("SELECT count(*) FROM evaluations WHERE split = 'holdout'")[0][0] >= 2
    assert not ray_tasks_under(cli.pid)


def test_an_unreachable_ray_address_is_a_one_line_user_error(tmp_path, instances_file):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    runs = tmp_path / "runs"
    out = run_cli(
        "--executor",
        "ray",
        "--ray-address",
        f"127.0.0.1:{port}",
        "--budget",
        "10",
        "--instances",
        str(instances_file),
        "--run-dir",
        str(runs),
        "--quiet",
        timeout=60,
    )
    assert out.returncode == 2, out.stderr + out.stdout
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and f"127.0.0.1:{port}" in lines[0], out.stderr
    assert not runs.exists() or not any(runs.iterdir())  # no run is left behind
