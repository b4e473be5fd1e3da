"""Whole searches through the real CLI: budget exactness, determinism, kill -9 and resume."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from archive.live import LIVE_FILE
from tests.conftest import REPO, run_cli, small_instances


def only_run(runs: Path) -> Path:
    (run,) = list(runs.iterdir())
    return run


def read(run: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(run / "archive.duckdb"), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def assert_budget_invariants(run: Path, budget: int) -> None:
    assert read(run, "SELECT count(*) FROM evaluations WHERE split = 'dev'")[0][0] == budget
    dupes = read(
        run, 'SELECT node_id, instance_id, "repeat", count(*) FROM evaluations GROUP BY ALL HAVING count(*) > 1'
    )
    assert dupes == []
    # every evaluated node exists and is valid; parents precede children
    assert (
        read(
            run,
            "SELECT count(*) FROM evaluations e LEFT JOIN nodes n ON n.id = e.node_id "
            "WHERE n.id IS NULL OR n.status <> 'valid'",
        )[0][0]
        == 0
    )
    assert read(run, "SELECT count(*) FROM nodes WHERE parent_id >= id")[0][0] == 0


def test_a_small_search_runs_end_to_end(tmp_path, instances_file):
    runs = tmp_path / "runs"
    out = run_cli(
        "--budget", "30", "--workers", "2", "--seed", "1", "--instances", str(instances_file), "--run-dir", str(runs)
    )
    assert out.returncode == 0, out.stderr + out.stdout
    assert "offline mutator" in out.stdout and "Final node" in out.stdout and "--resume" in out.stdout
    run = only_run(runs)
    assert_budget_invariants(run, 30)
    assert read(run, "SELECT status FROM runs")[0][0] == "finished"
    # the seed ran every dev instance first, scored 0.5 against itself
    assert read(run, "SELECT count(*), avg(score) FROM evaluations WHERE node_id = 0 AND split = 'dev'")[0] == (4, 0.5)
    final = read(run, "SELECT node_id, detail->>'rule' FROM events WHERE kind = 'select_final'")
    assert len(final) == 1 and "quantile" in final[0][1]
    holdout = read(run, "SELECT DISTINCT node_id FROM evaluations WHERE split = 'holdout' ORDER BY 1")
    assert {h[0] for h in holdout} == {0, final[0][0]}
    assert read(run, "SELECT count(*) FROM reference_evaluations WHERE agent = 'best_fit'")[0][0] == 6
    kinds = {k for (k,) in read(run, "SELECT DISTINCT kind FROM events")}
    assert {"start", "expand", "evaluate", "select_final"} <= kinds
    # holdout instances never enter the search's events
    assert (
        read(run, "SELECT count(*) FROM events WHERE kind = 'evaluate' AND detail->>'instance' LIKE 'holdout%'")[0][0]
        == 0
    )


def tree_of(run: Path) -> list[tuple]:
    return read(run, "SELECT id, parent_id, status, code_hash, diff, reason FROM nodes ORDER BY id")


@pytest.mark.slow
def test_same_seed_same_tree_with_one_worker(tmp_path, instances_file):
    trees = []
    for k in range(2):
        runs = tmp_path / f"runs{k}"
        out = run_cli(
            "--budget",
            "16",
            "--workers",
            "1",
            "--seed",
            "5",
            "--instances",
            str(instances_file),
            "--run-dir",
            str(runs),
            "--quiet",
        )
        assert out.returncode == 0, out.stderr
        trees.append(tree_of(only_run(runs)))
    assert trees[0] == trees[1]
    assert len(trees[0]) > 3
    other = tmp_path / "runs-other"
    assert (
        run_cli(
            "--budget",
            "16",
            "--workers",
            "1",
            "--seed",
            "6",
            "--instances",
            str(instances_file),
            "--run-dir",
            str(other),
            "--quiet",
        ).returncode
        == 0
    )
    assert tree_of(only_run(other)) != trees[0]


@pytest.mark.slow
def test_kill_9_then_resume_spends_exactly_the_budget(tmp_path):
    instances = small_instances(tmp_path / "inst.json", n_dev=6, n_holdout=2)
    runs = tmp_path / "runs"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "engine.search",
            "--budget",
            "60",
            "--workers",
            "2",
            "--seed",
            "3",
            "--instances",
            str(instances),
            "--run-dir",
            str(runs),
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    seen = ""
    try:
        deadline = time.monotonic() + 120
        for line in proc.stdout:
            seen += line
            if line.startswith("evaluations 24/60") or time.monotonic() > deadline:
                break
        assert "evaluations 24/60" in seen, seen
        os.kill(proc.pid, signal.SIGKILL)  # no cleanup, no flush: a power cut
    finally:
        proc.kill()
        proc.wait()
    run = only_run(runs)
    assert read(run, "SELECT status FROM runs")[0][0] == "running"
    done = read(run, "SELECT count(*) FROM evaluations WHERE split = 'dev'")[0][0]
    # group commit (archive/group_commit.py): the results of the last 20 ms, at most one per worker here, may
    # have been shown and not yet committed; the resume measures them again
    assert 24 - 2 <= done < 60
    out = run_cli("--resume", str(run), "--quiet")
    assert out.returncode == 0, out.stderr + out.stdout
    assert_budget_invariants(run, 60)
    assert read(run, "SELECT count(*) FROM events WHERE kind = 'resume'")[0][0] == 1
    assert read(run, "SELECT status FROM runs")[0][0] == "finished"
    # resuming a finished run spends nothing more
    again = run_cli("--resume", str(run), "--quiet")
    assert again.returncode == 0
    assert_budget_invariants(run, 60)


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def descendants(pid: int) -> set[int]:
    found, frontier = set(), [pid]
    while frontier:
        parent = frontier.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                kids = {int(x) for x in (task / "children").read_text().split()}
            except OSError:
                continue
            frontier += list(kids - found)
            found |= kids
    return found


def backend_missing(sandbox: str) -> str:
    """Why `sandbox` cannot run here ('' when it can)."""
    if sandbox == "bwrap":
        from engine.sandbox.bwrap import bwrap_available

        ok, why = bwrap_available()
    elif sandbox == "docker":
        from engine.sandbox.docker import docker_available

        ok, why = docker_available(build=False)
    else:
        ok, why = True, ""
    return "" if ok else why


ENDLESS = 1_000_000  # a budget no test waits for


def wait_for_evaluations(runs: Path, n: int, proc: subprocess.Popen, limit_s: float = 300) -> int:
    """How many evaluations the running search `proc` (its run folder in `runs`) has stored, once at least `n`:
    read from the live copy it keeps beside its archive (archive/live.py). `limit_s` only bounds a hang."""
    end = time.monotonic() + limit_s
    while True:
        assert proc.poll() is None, f"the search ended (exit {proc.returncode}) before {n} evaluations"
        for live in runs.glob(f"*/{LIVE_FILE}"):
            try:
                with duckdb.connect(str(live), read_only=True) as con:
                    count = con.execute("SELECT count(*) FROM evaluations").fetchone()[0]
            except duckdb.Error:  # replaced while opening: the next copy is there in a moment
                continue
            if count >= n:
                return count
        assert time.monotonic() < end, f"fewer than {n} evaluations after {limit_s} s"
        time.sleep(0.1)


def engine_containers(engine_pid: int) -> list[str]:
    import docker

    client = docker.from_env()
    try:
        found = client.containers.list(
            all=True, filters={"label": f"clade.engine_pid={engine_pid}"}, ignore_removed=True
        )
        return [c.id for c in found]
    finally:
        client.close()


@pytest.mark.slow
@pytest.mark.parametrize(
    "sandbox,signum",
    [
        ("process", signal.SIGINT),
        ("process", signal.SIGTERM),
        pytest.param("bwrap", signal.SIGINT, marks=pytest.mark.bwrap),
        pytest.param("docker", signal.SIGINT, marks=pytest.mark.docker),
    ],
)
def test_interrupt_stops_cleanly_and_leaves_no_sandbox_behind(tmp_path, sandbox, signum):
    missing = backend_missing(sandbox)
    if missing:
        pytest.skip(f"{sandbox} unavailable: {missing}")
    instances = small_instances(tmp_path / "inst.json", n_dev=6, n_holdout=2)
    pids = tmp_path / "pids"
    pids.mkdir()
    agent = tmp_path / "slow.py"  # slow enough that evaluations are in flight when the signal lands
    agent.write_text(
        "import os, time\nimport numpy as np\n"  # bwrap's jobs cannot write outside their box
        f"if os.path.isdir({str(pids)!r}):\n    open(os.path.join({str(pids)!r}, str(os.getpid())), 'w').close()\n"
        "def priority(item, bins):\n    time.sleep(0.01)\n    return np.zeros_like(bins)\n"
    )
    runs = tmp_path / "runs"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "engine.search",
            "--budget",
            str(ENDLESS),  # the signal, not the budget, ends it: it cannot finish first, however slow this test
            "--workers",
            "2",
            "--agent",
            str(agent),
            "--instances",
            str(instances),
            "--run-dir",
            str(runs),
            "--sandbox",
            sandbox,
            "--live-interval",
            "0.2",  # the live copy this test watches, refreshed often
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert wait_for_evaluations(runs, 6, proc) >= 6  # the seed's six, read from the run's live copy
    spawned = descendants(proc.pid)  # supervisor server, supervisors, jobs (bwrap and what it runs)
    if sandbox == "docker":  # containers are the daemon's children, not the engine's
        end = time.monotonic() + 10
        while not engine_containers(proc.pid) and time.monotonic() < end:
            time.sleep(0.05)
        assert engine_containers(proc.pid)
    else:
        assert spawned
    proc.send_signal(signum)
    rest, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130, rest
    assert "--resume" in rest and "Traceback" not in rest
    assert [pid for pid in spawned if alive(pid)] == []
    if sandbox == "docker":
        assert engine_containers(proc.pid) == []  # every container removed before the engine exited
    if sandbox == "process":  # bwrap's jobs cannot write outside their box, nor see host pids
        started = [int(p.name) for p in pids.iterdir()]
        assert len(started) >= 6
        assert [pid for pid in started if alive(pid)] == []  # every sandboxed agent is gone
    run = only_run(runs)
    assert read(run, "SELECT status FROM runs")[0][0] == "interrupted"
    assert read(run, "SELECT count(*) FROM evaluations WHERE split = 'dev'")[0][0] < ENDLESS


@pytest.mark.slow
def test_agent_folder_time_limit_and_a_larger_budget_on_resume(tmp_path, instances_file):
    agent = tmp_path / "my_agent"
    agent.mkdir()
    (agent / "helpers.py").write_text("WEIGHT = -1.0\n")
    (agent / "agent.py").write_text(
        "import numpy as np\nfrom helpers import WEIGHT\n\n"
        "def priority(item, bins):\n    return WEIGHT * (bins - item)\n"
    )
    runs = tmp_path / "runs"
    out = run_cli(
        "--agent",
        str(agent),
        "--budget",
        "400",
        "--workers",
        "2",
        "--time-limit",
        "4",
        "--instances",
        str(instances_file),
        "--run-dir",
        str(runs),
        "--quiet",
    )
    assert out.returncode == 0, out.stderr + out.stdout
    assert "time limit reached" in out.stdout
    run = only_run(runs)
    done = read(run, "SELECT count(*) FROM evaluations WHERE split = 'dev'")[0][0]
    assert 4 <= done < 400
    # the root holds both files; the helper module was importable in the sandbox
    assert read(run, "SELECT path FROM node_files WHERE node_id = 0 ORDER BY path") == [("agent.py",), ("helpers.py",)]
    assert (
        read(run, "SELECT count(*) FROM evaluations WHERE node_id = 0 AND split = 'dev' AND status = 'ok'")[0][0] == 4
    )
    out = run_cli("--resume", str(run), "--budget", str(done + 6), "--quiet")
    assert out.returncode == 0, out.stderr
    assert_budget_invariants(run, done + 6)


@pytest.mark.slow
@pytest.mark.bwrap
def test_a_search_in_the_bwrap_sandbox(tmp_path, instances_file):
    from engine.sandbox.bwrap import bwrap_available

    ok, why = bwrap_available()
    if not ok:
        pytest.skip(f"bwrap unusable: {why}")
    runs = tmp_path / "runs"
    out = run_cli(
        "--budget",
        "12",
        "--workers",
        "2",
        "--sandbox",
        "bwrap",
        "--instances",
        str(instances_file),
        "--run-dir",
        str(runs),
        "--quiet",
    )
    assert out.returncode == 0, out.stderr + out.stdout
    assert "sandbox bwrap" in out.stdout
    run = only_run(runs)
    assert_budget_invariants(run, 12)
    assert (
        read(run, "SELECT count(*) FROM evaluations WHERE node_id = 0 AND split = 'dev' AND status = 'ok'")[0][0] == 4
    )
