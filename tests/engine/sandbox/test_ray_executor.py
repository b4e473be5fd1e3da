"""The Ray executor: jobs as Ray tasks on a local Ray (one Ray session for the module, to keep time down)."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sandbox_helpers import PY, new_marker, pids_with_marker, process_exists, script_job

from engine.sandbox import SandboxJob
from engine.sandbox.ray_executor import RaySandbox, install_hint, ray_available

REPO = Path(__file__).resolve().parents[3]
RAY_OK, RAY_WHY = ray_available()


@pytest.fixture(scope="module")
def ray_sandbox():
    """A local Ray with 2 CPUs, started once for the module and shut down after it."""
    if not RAY_OK:
        pytest.skip(RAY_WHY)
    sandbox = RaySandbox("process", workers=2)
    try:
        yield sandbox
    finally:
        sandbox.close()


def run(sandbox, job):
    return asyncio.run(sandbox.run(job))


def test_what_workers_are_sent_imports_on_its_own(tmp_path: Path) -> None:
    """A worker on another machine has only the staged package (engine/__init__.py, engine/sandbox): every
    backend and the executors' node side import from it alone, no checkout or editable install behind it
    (`python -S -I`: no site-packages finder, no PYTHONPATH). An engine import outside it once hid here."""
    from engine.sandbox.ray_executor import _staged_engine

    modules = ["ray_executor", "slurm_executor", "on_node", "process", "bwrap", "docker", "_supervisor", "relay"]
    present = [m for m in modules if (REPO / "engine" / "sandbox" / f"{m}.py").exists()]
    with _staged_engine() as staged:
        code = f"import sys; sys.path.insert(0, {str(Path(staged).parent)!r}); " + "; ".join(
            f"import engine.sandbox.{m}" for m in present
        )
        out = subprocess.run([sys.executable, "-S", "-I", "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-1500:]
    assert len(present) >= 6


async def wait_for(predicate, timeout: float = 30.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def gone_within(marker: str, timeout: float = 10.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while (left := pids_with_marker(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


# ----- without Ray running ----------------------------------------------------------


def test_ray_available_says_why_when_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    assert ray_available() == (False, install_hint())
    with pytest.raises(RuntimeError, match=r"pip install -c constraints.txt -e '\.\[ray\]'"):
        RaySandbox("process")


def test_importing_the_sandboxes_does_not_import_ray():
    code = (
        "import sys, engine.sandbox, engine.sandbox.ray_executor as r; "
        "r.ray_available.__name__; assert 'ray' not in sys.modules, 'ray imported'"
    )
    out = subprocess.run(
        [PY, "-c", code],
        check=False,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
    )
    assert out.returncode == 0, out.stderr


@pytest.mark.ray
@pytest.mark.skipif(not RAY_OK, reason=RAY_WHY)
def test_ray_available_when_installed():
    ok, why = ray_available()
    assert ok and why.startswith("ray ")


@pytest.mark.ray
@pytest.mark.skipif(not RAY_OK, reason=RAY_WHY)
def test_an_unreachable_address_is_one_line_runtime_error():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    addresses = [f"127.0.0.1:{port}", f"ray://127.0.0.1:{port}"]  # a GCS, and Ray Client
    # in a fresh process: this module's Ray is already initialised here and would be reused
    code = (
        "from engine.sandbox.ray_executor import RaySandbox\n"
        f"for address in {addresses!r}:\n"
        "    try:\n"
        "        RaySandbox('process', address=address)\n"
        "    except RuntimeError as exc:\n"
        "        print('RuntimeError:', exc)\n"
    )
    started = time.monotonic()
    out = subprocess.run(
        [PY, "-c", code],
        check=False,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 2, out.stdout
    for line, address in zip(lines, addresses, strict=True):
        assert line.startswith(f"RuntimeError: cannot reach the Ray cluster at {address}: "), line
    assert time.monotonic() - started < 30


# ----- jobs on a local Ray ---------------------------------------------------------


@pytest.mark.slow
@pytest.mark.ray
@pytest.mark.skipif(not RAY_OK, reason=RAY_WHY)
def test_an_ok_job_brings_back_its_answer(ray_sandbox):
    assert ray_sandbox.name == "ray/process"
    payload = bytes(range(256)) * 4  # the job's files travel with the task, bytes intact
    job = SandboxJob(
        files={
            "runner.py": b"import sys\ndata = open('in/data.bin', 'rb').read()\n"
            b"open('answer.bin', 'wb').write(data[::-1])\nprint('done', len(data))\n",
            "in/data.bin": payload,
        },
        command=[PY, "runner.py"],
        answer_file="answer.bin",
    )
    result = run(ray_sandbox, job)
    assert result.status == "ok", result
    assert result.answer == payload[::-1]
    assert "done 1024" in result.stdout_tail


@pytest.mark.ray
@pytest.mark.skipif(not RAY_OK, reason=RAY_WHY)
def test_a_job_over_its_wall_limit_times_out(ray_sandbox):
    marker = new_marker()
    result = run(ray_sandbox, script_job("import time; time.sleep(60)", args=(marker,), timeout_s=1.0))
    assert result.status == "timeout", result
    assert result.runtime_s < 10
    assert gone_within(marker) == []


@pytest.mark.ray
@pytest.mark.skipif(not RAY_OK, reason=RAY_WHY)
def test_jobs_run_at_once(ray_sandbox, tmp_path):
    """Two jobs that each wait for the other finish only if they ran at the same time."""
    meet = tmp_path / "meet"
    meet.mkdir()
    code = f"""
        import os, sys, time
        me = sys.argv[1]
        open(os.path.join({str(meet)!r}, me), 'w').close()
        deadline = time.time() + 20
        while len(os.listdir({str(meet)!r})) < 2 and time.time() < deadline:
            time.sleep(0.02)
        open('answer.txt', 'w').write(str(len(os.listdir({str(meet)!r}))))
    """

    async def both():
        return await asyncio.gather(
            *(ray_sandbox.run(script_job(code, args=(name,), timeout_s=30.0)) for name in ("a", "b"))
        )

    results = asyncio.run(both())
    assert [r.status for r in results] == ["ok", "ok"], results
    assert [r.answer for r in results] == [b"2", b"2"]


@pytest.mark.ray
@pytest.mark.skipif(not RAY_OK, reason=RAY_WHY)
def test_cancelling_a_run_leaves_no_process(ray_sandbox):
    marker = new_marker()

    async def start_then_cancel():
        task = asyncio.ensure_future(
            ray_sandbox.run(script_job("import time; time.sleep(60)", args=(marker,), timeout_s=120.0))
        )
        await wait_for(lambda: pids_with_marker(marker), what="the job to start")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(start_then_cancel())
    assert gone_within(marker) == []
    # and Ray goes on: the killed worker is replaced
    assert run(ray_sandbox, script_job("open('answer.txt', 'w').write('after')")).answer == b"after"


def attempts(trace: Path) -> list[tuple[str, int]]:
    """The trace of a RaySandbox(trace_dir=...): ('start' | 'end', worker pid) per attempt."""
    if not trace.exists():
        return []
    return [(word, int(pid)) for word, pid in (line.split() for line in trace.read_text().splitlines())]


def run_killing_the_first_worker(sandbox: RaySandbox, job: SandboxJob, marker: str, trace: Path):
    """Run `job`, SIGKILL the Ray worker process running it once it has started; (that pid, [results])."""

    async def go():
        task = asyncio.ensure_future(sandbox.run(job))
        await wait_for(lambda: attempts(trace) and pids_with_marker(marker), what="the job to start")
        ((event, worker),) = attempts(trace)
        assert event == "start" and worker != os.getpid()
        os.kill(worker, signal.SIGKILL)  # the Ray worker process running the job dies mid-job
        return worker, [await task]  # one awaited result: what the engine records, once

    return asyncio.run(go())


@pytest.mark.slow
@pytest.mark.ray
@pytest.mark.skipif(not RAY_OK, reason=RAY_WHY)
def test_a_dead_worker_is_retried_elsewhere_and_recorded_once(ray_sandbox, tmp_path):
    traced = RaySandbox("process", trace_dir=tmp_path)  # joins the module's Ray, with a trace of attempts
    marker = new_marker()
    job = script_job(
        "import time; time.sleep(2); open('answer.txt', 'w').write('survived')", args=(marker,), timeout_s=30.0
    )
    worker, results = run_killing_the_first_worker(traced, job, marker, tmp_path / "ray-trace.log")
    traced.close()  # not the owner: Ray stays up for the other tests
    (result,) = results
    assert result.status == "ok" and result.answer == b"survived", result
    trace = attempts(tmp_path / "ray-trace.log")
    starts = [pid for event, pid in trace if event == "start"]
    ends = [pid for event, pid in trace if event == "end"]
    assert len(starts) == 2 and starts[0] == worker and starts[1] != worker  # ran twice, elsewhere the second time
    assert ends == [starts[1]]  # finished once
    assert not process_exists(worker)
    assert gone_within(marker) == []  # the first attempt's job died with its worker


@pytest.mark.ray
@pytest.mark.skipif(not RAY_OK, reason=RAY_WHY)
def test_a_job_whose_workers_all_die_is_an_error_result(ray_sandbox, tmp_path):
    once = RaySandbox("process", trace_dir=tmp_path, max_retries=0)
    marker = new_marker()
    job = script_job("import time; time.sleep(30)", args=(marker,), timeout_s=60.0)
    _, (result,) = run_killing_the_first_worker(once, job, marker, tmp_path / "ray-trace.log")
    assert result.status == "error" and result.answer is None, result
    assert "Ray worker running this job died on each of 1 attempts" in result.reason
    assert "\n" not in result.reason
    assert gone_within(marker) == []


@pytest.mark.ray
@pytest.mark.skipif(not RAY_OK, reason=RAY_WHY)
def test_an_unknown_inner_sandbox_is_refused(ray_sandbox):
    with pytest.raises(ValueError, match="unknown sandbox 'nope'"):
        RaySandbox("nope")


@pytest.mark.ray
@pytest.mark.skipif(not RAY_OK, reason=RAY_WHY)
def test_limits_travel_with_the_job(ray_sandbox):
    result = run(ray_sandbox, script_job("print('x' * 5000)", output_bytes=100, timeout_s=5.0))
    assert result.status == "ok" and result.stdout_tail == "x" * 99 + "\n"
