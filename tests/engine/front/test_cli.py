"""The command line as a user meets it: fast help, one-line refusals with exit code 2."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import time

import pytest

from archive import SCHEMA_VERSION, Archive
from tests.conftest import REPO, run_cli

HEAVY = ("litellm", "docker", "ray", "matplotlib")


def test_help_is_fast_and_imports_nothing_heavy():
    code = (
        "import sys, time, runpy\n"
        "t = time.perf_counter()\n"
        "sys.argv = ['engine.search', '--help']\n"
        "try:\n    runpy.run_module('engine.search', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print('ELAPSED', time.perf_counter() - t)\n"
        f"print('HEAVY', [m for m in {HEAVY!r} if m in sys.modules])\n"
        "print('ALSO', [m for m in ('duckdb', 'numpy', 'rich') if m in sys.modules])\n"
    )
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=30)
    wall = time.perf_counter() - start
    assert "--budget" in out.stdout and "--resume" in out.stdout
    assert "HEAVY []" in out.stdout
    assert "ALSO []" in out.stdout  # nothing but argparse before parsing
    assert wall < 5, wall  # the goal is < 1 s; this machine is noisy, so the test only catches a regression


@pytest.mark.parametrize(
    "args, message",
    [
        (["--task", "nope"], "unknown task 'nope'"),
        (["--policy", "nope"], "unknown policy 'nope'"),
        (["--budget", "0"], "--budget must be a positive"),
        (["--budget", "-3"], "--budget must be a positive"),
        (["--budget", "many"], "invalid int value"),
        (["--frobnicate"], "unknown flag --frobnicate"),
        (["--workers", "-1"], "--workers: must be 1 or more"),
        (["--agent", "/no/such/agent.py"], "no such file"),
        (["--instances", "/no/such.json"], "cannot read instances"),
        (["--sandbox", "vm"], "unknown sandbox 'vm'"),
        (["--executor", "kubernetes"], "unknown executor 'kubernetes'"),
        (["--slurm-partition", "gpu"], "--slurm-partition needs --executor slurm"),
        (["--executor", "slurm", "--slurm-option", "mem"], "--slurm-option takes KEY=VALUE"),
        (["--executor", "slurm", "--slurm-option", "output=/tmp/x"], "the executor sets --output itself"),
        (["--executor", "slurm", "--slurm-time", "soon"], "--slurm-time takes what sbatch --time does"),
        (["--ray-address", "auto"], "--ray-address needs --executor ray"),
        (["--sandbox", "process", "--image", "python:3.11-slim"], "--image is for --sandbox docker"),
        (["--memory-mb", "0"], "--memory-mb must be a positive"),
        (["--max-procs", "-2"], "--max-procs must be a positive"),
        (["--cpus", "0"], "--cpus must be a positive"),
        (["--output-bytes", "-1"], "--output-bytes must be 0 or more"),
        (["--stages", "4"], "bad stages '4'"),
        (["--stages", "4:1.5"], "a threshold is a mean score"),
        (["--final", "best"], "unknown final rule 'best'"),
        (["--final-k", "3"], "--final-k needs --final max_mean_k"),
        (["--final", "max_mean_k", "--final-k", "0"], "--final-k must be 1 or more"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, message):
    out = run_cli(*args, "--run-dir", str(tmp_path / "runs"))
    assert out.returncode == 2, out
    assert message in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "Traceback" not in out.stderr + out.stdout
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_a_broken_seed_agent_is_refused(tmp_path):
    agent = tmp_path / "agent.py"
    agent.write_text("def priority(item, bins)\n    return bins\n")
    out = run_cli("--agent", str(agent), "--run-dir", str(tmp_path / "runs"))
    assert out.returncode == 2 and "not a usable agent" in out.stderr and "Traceback" not in out.stderr


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_resume_refusals_leave_the_archive_untouched(tmp_path):
    not_archive = tmp_path / "empty"
    not_archive.mkdir()
    out = run_cli("--resume", str(not_archive))
    assert out.returncode == 2 and "not an archive" in out.stderr

    run = tmp_path / "run"
    run.mkdir()
    with Archive.create(run / "archive.duckdb", "r1", {"task": "binpack"}, seed=0) as a:
        a.query("UPDATE runs SET schema_version = ?", [SCHEMA_VERSION + 1])
    before = digest(run / "archive.duckdb")
    out = run_cli("--resume", str(run))
    assert out.returncode == 2 and "newer" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert digest(run / "archive.duckdb") == before

    out = run_cli("--resume", str(run), "--policy", "greedy")
    assert out.returncode == 2 and "cannot change on --resume" in out.stderr


def test_an_archive_held_by_a_running_search_is_refused(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    path = run / "archive.duckdb"
    Archive.create(path, "r1", {"task": "binpack"}, seed=0).close()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb, time; c = duckdb.connect({str(path)!r}); print('held', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        out = run_cli("--resume", str(run))
        assert out.returncode == 2 and "held by another running search" in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1
    finally:
        holder.kill()
        holder.wait()


def test_a_sandbox_that_cannot_run_here_is_one_line_and_leaves_no_run(tmp_path, monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-daemon.sock")  # none there, daemon here or not
    out = run_cli("--sandbox", "docker", "--budget", "3", "--run-dir", str(tmp_path / "runs"))
    assert out.returncode == 2, out
    assert out.stderr.startswith("error: --sandbox docker:") and "Traceback" not in out.stderr + out.stdout
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert not any((tmp_path / "runs").iterdir())  # the folder made for the run was taken back


def test_limit_flags_override_the_tasks_limits():
    from engine.config import RunConfig
    from engine.front.opening import make_run_task as _make_task

    default = _make_task(RunConfig()).limits
    task = _make_task(RunConfig.of(eval_timeout=3.5, memory_mb=300, max_procs=9, output_bytes=100, cpus=0.5))
    assert (task.limits.timeout_s, task.limits.cpu_s, task.limits.memory_mb) == (3.5, 4, 300)
    assert (task.limits.processes, task.limits.output_bytes, task.limits.cpus) == (9, 100, 0.5)
    assert task.limits.file_size_mb == default.file_size_mb
    assert _make_task(RunConfig.of(eval_timeout=3.5, cpu_time=2)).limits.cpu_s == 2


def test_policy_flags_build_the_policy_they_name():
    from engine.config import RunConfig
    from search.cascade import Staged
    from search.final import WithFinal

    assert isinstance(RunConfig.of(policy="dgm").search.make_policy(), Staged)  # DGM's own stages by default
    assert not isinstance(RunConfig.of(policy="dgm", stages="none").search.make_policy(), Staged)
    staged = RunConfig.of(policy="hgm", stages="4:0.5").search.make_policy()
    assert isinstance(staged, Staged) and (staged.first, staged.threshold) == (4, 0.5)
    assert isinstance(RunConfig().search.make_policy(), Staged)  # the default search: hgm with DGM's stages
    # an archive made before staged defaults (no `stages` in its config) goes on as it ran: unstaged
    assert not isinstance(RunConfig.from_dict({"policy": "hgm"}).search.make_policy(), Staged)
    assert isinstance(RunConfig.from_dict(RunConfig().to_dict()).search.make_policy(), Staged)
    final = RunConfig.of(policy="uct", final="max_mean_k", final_k=3).search.make_policy()
    assert isinstance(final, WithFinal) and final.rule == "max_mean_k" and final.k == 3
