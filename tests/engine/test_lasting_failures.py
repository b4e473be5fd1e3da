"""Whole searches against what Clade did not write: a real litellm talking to a real HTTP server on loopback.

Each test runs the command line (`engine.front.cli.main`, as `python -m engine.search`
runs it; in this process, so that litellm is imported once for all of them)
with the default workers and `--sandbox auto` against
tests/engine/llm/openai_stub.py, with no provider key in the environment, and
checks what the user sees: the line printed, the exit code, the run's status,
and that a resumed run goes on once the cause is gone. The missing key runs as
a real subprocess: how fast it answers is the point.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from engine.front.cli import main
from tests.conftest import REPO, small_instances
from tests.engine.llm.openai_stub import BAD_KEY, Answer, Fail, Hang, OpenAIStub
from tests.engine.test_llm_search import good_diff
from tests.engine.test_search_e2e import only_run, read

PROSE = "I would make the priority prefer bins that are nearly full, but here is only the idea, no code."


@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def search(capsys, monkeypatch):
    """The command line as a user runs it, with no provider key: (what it printed and returned, seconds)."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("COLUMNS", "250")

    def run(*args: str) -> tuple[Ran, float]:
        capsys.readouterr()
        started = time.monotonic()
        code = main(list(args))
        seconds = time.monotonic() - started
        said = capsys.readouterr()
        return Ran(code, said.out, said.err), seconds

    return run


def model_args(stub: OpenAIStub, instances: Path, runs: Path, *extra: str) -> list[str]:
    return [
        "--model",
        "openai/stub",
        "--api-base",
        stub.url,
        "--instances",
        str(instances),
        "--run-dir",
        str(runs),
        *extra,
    ]


def good(body: dict, n: int) -> Answer:
    return Answer("OK") if body.get("max_tokens") == 5 else Answer(good_diff(body["messages"], n))


def last_line(text: str) -> str:
    return text.strip().splitlines()[-1]


def test_no_api_key_is_one_line_naming_the_variable(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("OPENAI_API_KEY", None)
    started = time.monotonic()
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "engine.search",
            "--model",
            "openai/gpt-4o-mini",
            "--budget",
            "40",
            "--run-dir",
            str(tmp_path / "runs"),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    seconds = time.monotonic() - started
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stderr.count("\n") == 1 and "OPENAI_API_KEY" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "runs").exists()  # nothing made
    print(f"no key: exit {out.returncode} in {seconds:.1f} s: {out.stderr.strip()}")


@pytest.mark.slow
def test_a_server_that_always_fails_stops_at_the_probe_and_the_run_resumes(search, tmp_path, instances_file):
    runs = tmp_path / "runs"
    healthy = {"on": False}
    with OpenAIStub(lambda body, n: good(body, n) if healthy["on"] else Fail(500, "upstream exploded")) as stub:
        out, seconds = search(*model_args(stub, instances_file, runs, "--budget", "6"))
        assert len(stub.chat_requests()) == 2  # the probe and its one retry, nothing else
        assert out.returncode == 2 and "Traceback" not in out.stderr
        line = last_line(out.stderr)
        assert "probe call" in line and "upstream exploded" in line and "--resume" in line
        run = only_run(runs)
        assert read(run, "SELECT status FROM runs")[0][0] == "interrupted"
        assert read(run, "SELECT count(*) FROM evaluations")[0][0] == 0  # nothing ran before the model answered
        assert read(run, "SELECT purpose, count(*) FROM llm_calls GROUP BY 1") == [("probe", 2)]
        healthy["on"] = True  # the server is back: the same run goes on
        again, _ = search("--resume", str(run), "--quiet")
    assert again.returncode == 0, again.stdout + again.stderr
    assert read(run, "SELECT status FROM runs")[0][0] == "finished"
    assert read(run, "SELECT count(*) FROM evaluations WHERE split = 'dev'")[0][0] == 6
    print(f"always 500: exit 2 in {seconds:.1f} s: {line}")


@pytest.mark.slow
def test_failures_after_the_probe_trip_the_breaker_and_resume_goes_on(search, tmp_path, instances_file):
    runs = tmp_path / "runs"
    healthy = {"on": False}

    def respond(body, n):
        if body.get("max_tokens") == 5 or healthy["on"]:
            return good(body, n)
        return Fail(500, "upstream exploded")

    with OpenAIStub(respond) as stub:
        out, seconds = search(*model_args(stub, instances_file, runs, "--budget", "8", "--max-failing-time", "3"))
        assert out.returncode == 2, out.stdout + out.stderr
        line = last_line(out.stderr)
        assert "have failed for" in line and "upstream exploded" in line and "--resume" in line
        assert "model calls 1 ok / " in out.stdout  # the progress line shows the stuck model
        run = only_run(runs)
        assert read(run, "SELECT status FROM runs")[0][0] == "interrupted"
        seed_evals = read(run, "SELECT count(*) FROM evaluations WHERE node_id = 0")[0][0]
        assert seed_evals == 4  # the seed's evaluations were kept
        assert read(run, "SELECT count(*) FROM llm_calls WHERE error LIKE 'InternalServerError%'")[0][0] >= 2
        healthy["on"] = True  # the cause is fixed: resuming goes on from where it stopped
        again, _ = search("--resume", str(run), "--quiet")
    assert again.returncode == 0, again.stdout + again.stderr
    assert read(run, "SELECT status FROM runs")[0][0] == "finished"
    assert read(run, "SELECT count(*) FROM evaluations WHERE split = 'dev'")[0][0] == 8
    assert read(run, "SELECT count(*) FROM nodes WHERE status = 'valid' AND id > 0")[0][0] >= 1
    print(f"500 after the probe: exit 2 in {seconds:.1f} s: {line}")


def test_a_bad_key_mid_run_stops_at_once(search, tmp_path, instances_file):
    runs = tmp_path / "runs"
    with OpenAIStub(lambda body, n: Answer("OK") if body.get("max_tokens") == 5 else BAD_KEY) as stub:
        out, _ = search(*model_args(stub, instances_file, runs, "--budget", "12"))
        mutate_calls = len(stub.chat_requests()) - 1
    assert out.returncode == 2
    line = last_line(out.stderr)
    assert "no valid API key for openai/stub" in line and "--resume" in line
    assert 1 <= mutate_calls <= 2  # no retry of a bad key (two expansions may have been in flight)


@pytest.mark.slow
def test_a_model_that_never_writes_an_edit_is_switched_to_whole_files_then_stopped(search, tmp_path, instances_file):
    runs = tmp_path / "runs"
    with OpenAIStub(lambda body, n: Answer("OK") if body.get("max_tokens") == 5 else Answer(PROSE)) as stub:
        out, seconds = search(*model_args(stub, instances_file, runs, "--budget", "12"))
        asked = stub.chat_requests()[1:]
        failed = read(only_run(runs), "SELECT count(*) FROM nodes WHERE status = 'failed'")[0][0]
        assert failed in (8, 9)  # the eighth, and the other one in flight if it failed at once
        # a resumed run remembers the switch: its first question already asks for the whole file
        again, _ = search("--resume", str(only_run(runs)), "--max-failed-expansions", "1")
        after = stub.chat_requests()[len(asked) + 2 :]  # past the resumed run's probe
    assert (
        again.returncode == 2 and "in a row made no usable child" in again.stderr
    )  # 1, or 2 when both in flight failed
    assert after and all("SEARCH" not in b["messages"][0]["content"] + b["messages"][1]["content"] for b in after)
    assert "asking it for whole files" not in again.stdout
    assert out.returncode == 2, out.stdout + out.stderr
    line = last_line(out.stderr)
    assert "8 expansions in a row made no usable child" in line and "--resume" in line  # the default breaker
    assert out.stdout.count("asking it for whole files") == 1  # the switch is said once
    run = only_run(runs)
    [(detail,)] = read(run, "SELECT detail FROM events WHERE kind = 'answer_format'")
    assert '"to":"rewrite"' in detail.replace(" ", "")
    prompts = [body["messages"][0]["content"] + body["messages"][1]["content"] for body in asked]
    assert "SEARCH" in prompts[0] and "SEARCH" not in prompts[-1]  # later expansions ask for the whole file
    assert read(run, "SELECT count(*) FROM nodes WHERE status = 'failed'")[0][0] - failed in (1, 2)  # the resumed
    print(f"prose answers: exit 2 in {seconds:.1f} s after {len(asked)} calls: {line}")


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_time_limit_stop_is_reported_as_what_it_is(search, tmp_path, instances_file, workers):
    runs = tmp_path / "runs"
    with OpenAIStub(lambda body, n: Answer("OK") if body.get("max_tokens") == 5 else Hang()) as stub:
        out, seconds = search(
            *model_args(stub, instances_file, runs, "--budget", "12", "--time-limit", "3", "--workers", workers)
        )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "time limit reached" in out.stdout and "Interrupted" not in out.stdout + out.stderr
    run = only_run(runs)
    assert read(run, "SELECT status FROM runs")[0][0] == "time_limit"
    assert seconds < 120  # a hung model call does not hold the run past its limit (it is cancelled)
    print(f"time limit 3 s, {workers} worker(s): exit 0 in {seconds:.1f} s")


def test_a_budget_the_seed_uses_up_is_said_at_the_start(search, tmp_path, instances_file):
    out, _ = search("--budget", "3", "--instances", str(instances_file), "--run-dir", str(tmp_path / "runs"))
    assert out.returncode == 0, out.stderr
    assert "the seed alone uses 4 of 3 dev evaluations: no expansion will run" in out.stdout


def write_crashing_metric_folder(folder: Path) -> Path:
    folder.mkdir()
    (folder / "config.py").write_text('TASK_NAME = "crash"\nMETRIC_NAME = "score"\nHIGHER_IS_BETTER = True\n')
    (folder / "initial_solution.py").write_text(
        "# EVOLVE-BLOCK-START\ndef solve(x):\n    return 2 * x\n# EVOLVE-BLOCK-END\n"
    )
    (folder / "benchmark.py").write_text(
        "import initial_solution\ndata = []\nprint('score:', initial_solution.solve(data[3]))\n"
    )
    return folder


def test_a_seed_that_fails_stops_before_any_expansion(search, tmp_path):
    runs = tmp_path / "runs"
    out, seconds = search(
        "--task", str(write_crashing_metric_folder(tmp_path / "crash")), "--budget", "40", "--run-dir", str(runs)
    )
    assert out.returncode == 2 and "Traceback" not in out.stderr
    line = last_line(out.stderr)
    assert "seed (node 0) failed" in line and "benchmark.py exited with 1: IndexError" in line
    run = only_run(runs)  # kept for inspection
    assert str(run) in line
    assert read(run, "SELECT count(*) FROM nodes")[0][0] == 1
    assert read(run, "SELECT count(*) FROM events WHERE kind = 'expand'")[0][0] == 0
    assert read(run, "SELECT status FROM runs")[0][0] == "interrupted"
    print(f"failing seed: exit 2 in {seconds:.1f} s: {line}")


def test_a_seed_that_fails_its_first_stage_stops_without_the_rest(search, tmp_path):
    """Staged hgm (the default) screens on 3 of 16 dev instances: three failures are enough to stop."""
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import numpy as np\n\ndef priority(item: float, bins: np.ndarray) -> np.ndarray:\n"
        "    raise RuntimeError('this agent is broken')\n"
    )
    runs = tmp_path / "runs"
    instances = small_instances(tmp_path / "inst.json", n_dev=16, n_holdout=2)
    out, _ = search("--agent", str(agent), "--instances", str(instances), "--budget", "40", "--run-dir", str(runs))
    assert out.returncode == 2
    assert "RuntimeError: this agent is broken" in last_line(out.stderr)
    run = only_run(runs)
    done = read(run, "SELECT count(*) FROM evaluations WHERE split = 'dev'")[0][0]
    assert 3 <= done < 16  # the first stage, and what was in flight; never the whole dev set
    assert read(run, "SELECT count(*) FROM nodes")[0][0] == 1
