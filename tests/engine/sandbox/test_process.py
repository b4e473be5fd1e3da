"""Behaviour of the `process` sandbox on ordinary and misbehaving jobs."""

from __future__ import annotations

import asyncio
import json
import resource
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from sandbox_helpers import PY, run, script_job

from engine.sandbox import ProcessSandbox, SandboxJob


def test_ordinary_job_returns_answer_and_output(tmp_path: Path) -> None:
    job = SandboxJob(
        files={"runner.py": b"import data.inp as d\nopen('out/answer.txt','w').write(d.X * 2)\nprint('done')\n",
               "data/inp.py": b"X = 'ab'\n", "out/.keep": b""},
        command=[PY, "runner.py"],
        answer_file="out/answer.txt",
    )  # fmt: skip
    res = asyncio.run(ProcessSandbox(base_dir=tmp_path).run(job))
    assert res.status == "ok", res
    assert res.returncode == 0
    assert res.answer == b"abab"
    assert res.stdout_tail == "done\n"
    assert res.reason == ""
    assert list(tmp_path.iterdir()) == []  # working directory removed


def test_infinite_loop_times_out_close_to_the_limit() -> None:
    t0 = time.monotonic()
    res = run(script_job("while True:\n    pass\n", timeout_s=1.5))
    elapsed = time.monotonic() - t0
    assert res.status == "timeout"
    assert res.reason.startswith("timed out after 1.5 s")
    assert 1.4 <= res.runtime_s <= 2.5
    assert elapsed < 3.5


def test_memory_bomb_is_not_ok_and_engine_survives() -> None:
    res = run(script_job("""
        blocks = []
        while True:
            blocks.append(bytearray(64 * 2**20))
    """, memory_mb=256, timeout_s=10))  # fmt: skip
    assert res.status in ("error", "killed"), res
    assert "MemoryError" in res.stderr_tail
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < 1024 * 1024  # KiB: engine stayed well under 1 GB


def test_output_flood_is_bounded_and_keeps_the_last_line() -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    res = run(script_job("""
        import sys
        block = ('x' * 1023 + '\\n') * 1024          # 1 MiB
        for i in range(50):
            sys.stdout.write(block)
            sys.stderr.write(block[:4096])
        print('LAST LINE 12345')
        sys.stderr.write('err end\\n')
    """, output_bytes=4096, timeout_s=30))  # fmt: skip
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert res.status == "ok", res.reason
    assert len(res.stdout_tail) <= 4096 and len(res.stderr_tail) <= 4096
    assert res.stdout_tail.endswith("LAST LINE 12345\n")
    assert res.stderr_tail.endswith("err end\n")
    assert after - before < 40 * 1024  # KiB: 50 MB went through without being held


def test_printed_score_is_just_text() -> None:
    res = run(script_job("print('score: 1.0')\nprint('status: ok')\nraise SystemExit(1)\n"))
    assert res.status == "error"
    assert res.returncode == 1
    assert "score: 1.0" in res.stdout_tail
    assert res.reason.startswith("exit code 1")


def test_environment_is_scrubbed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-leak")
    monkeypatch.setenv("PYTHONPATH", "/should/not/leak")
    res = run(script_job("""
        import importlib.util, json, os, sys
        json.dump({"env": dict(os.environ), "cwd": os.getcwd(), "path": sys.path,
                   "pytest_found": importlib.util.find_spec("pytest") is not None},
                  open("answer.txt", "w"))
    """))  # fmt: skip
    assert res.status == "ok", res
    got = json.loads(res.answer or b"{}")
    env = got["env"]
    assert "OPENAI_API_KEY" not in env
    assert "PYTHONPATH" not in env and "/should/not/leak" not in got["path"]
    assert env["HOME"] == got["cwd"] and env["TMPDIR"] == got["cwd"]
    assert env["PYTHONHASHSEED"] == "0" and env["OMP_NUM_THREADS"] == "1"
    assert set(env) <= {"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE",
                        "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "LC_CTYPE"}  # fmt: skip
    assert got["pytest_found"]  # the interpreter still sees its site-packages


def test_exit_code_is_reported() -> None:
    res = run(script_job("import os\nos._exit(3)\n"))
    assert (res.status, res.returncode, res.reason.split(";")[0]) == (
        "error",
        3,
        "exit code 3",
    )


def test_cpu_limit_kills_well_before_the_wall_limit() -> None:
    res = run(script_job("while True:\n    pass\n", cpu_s=1, timeout_s=10))
    assert res.status == "killed", res
    assert res.returncode in (-24, -9)  # SIGXCPU, or SIGKILL at the hard limit
    assert "CPU time limit" in res.reason
    assert res.runtime_s < 4


def test_file_size_limit() -> None:
    res = run(script_job("open('big.bin', 'wb').write(b'x' * (2 * 2**20))\nopen('answer.txt','w').write('x')\n",
                         file_size_mb=1))  # fmt: skip
    assert res.status != "ok"
    assert "File too large" in res.stderr_tail or "SIGXFSZ" in res.reason


def test_missing_answer_is_none_with_reason() -> None:
    res = run(script_job("print('no answer written')\n"))
    assert res.status == "ok"
    assert res.answer is None
    assert "no answer file 'answer.txt'" in res.reason


@pytest.mark.parametrize(
    ("code", "expect"),
    [
        ("import os\nos.symlink('/etc/hostname', 'answer.txt')\n", "outside"),
        ("import os\nos.mkfifo('answer.txt')\n", "not a regular file"),
        ("import os\nos.mkdir('answer.txt')\n", "not a regular file"),
        ("open('answer.txt', 'wb').write(b'x' * 101)\n", "larger than 100 bytes"),
    ],
)
def test_answer_file_is_refused_when_unsafe(code: str, expect: str) -> None:
    job = script_job(code)
    job = SandboxJob(
        files=job.files,
        command=job.command,
        answer_file=job.answer_file,
        answer_limit=100,
    )
    res = run(job)
    assert res.answer is None
    assert expect in res.reason


def test_answer_symlink_inside_the_directory_is_read() -> None:
    res = run(script_job("import os\nopen('real.txt','w').write('42')\nos.symlink('real.txt', 'answer.txt')\n"))
    assert res.answer == b"42"


def test_answer_at_the_limit_is_read() -> None:
    job = script_job("open('answer.txt', 'wb').write(b'y' * 100)\n")
    res = run(
        SandboxJob(
            files=job.files,
            command=job.command,
            answer_file=job.answer_file,
            answer_limit=100,
        )
    )
    assert res.answer == b"y" * 100


def test_command_that_cannot_start() -> None:
    res = run(SandboxJob(files={}, command=["./no-such-program"], answer_file="a"))
    assert res.status == "error" and res.returncode is None
    assert "could not start './no-such-program'" in res.reason


def test_jobs_run_concurrently(tmp_path: Path) -> None:
    """Four jobs meet: each says it started, then waits until all four have; run one after another, the
    first would wait out its time limit. (An event, not a clock: a loaded machine only makes it slower.)"""
    meeting = tmp_path / "meeting"
    meeting.mkdir()
    code = (
        "import os, time, uuid\n"
        f"meeting = {str(meeting)!r}\n"
        "open(os.path.join(meeting, uuid.uuid4().hex), 'w').close()\n"
        "while len(os.listdir(meeting)) < 4:\n    time.sleep(0.01)\n"
        "open('answer.txt', 'w').write('z')\n"
    )

    async def many() -> list:
        sb = ProcessSandbox()
        return await asyncio.gather(*(sb.run(script_job(code, timeout_s=60)) for _ in range(4)))

    results = asyncio.run(many())
    assert [(r.status, r.answer) for r in results] == [("ok", b"z")] * 4, results


def test_working_directory_with_unwritable_parts_is_removed(tmp_path: Path) -> None:
    res = asyncio.run(ProcessSandbox(base_dir=tmp_path).run(script_job("""
        import os
        os.makedirs('a/b')
        open('a/b/f', 'w').write('x')
        os.chmod('a/b', 0o000)
        os.chmod('a', 0o500)
    """)))  # fmt: skip
    assert res.status == "ok"
    assert list(tmp_path.iterdir()) == []


def test_rlimits_are_applied_in_the_job() -> None:
    res = run(script_job("""
        import resource
        names = ("RLIMIT_CPU", "RLIMIT_AS", "RLIMIT_FSIZE", "RLIMIT_CORE")
        lim = {n: resource.getrlimit(getattr(resource, n)) for n in names}
        open('answer.txt', 'w').write(repr(lim))
    """, cpu_s=7, memory_mb=900, file_size_mb=3))  # fmt: skip
    lim = eval(res.answer or b"{}")  # our own repr of ints and tuples
    assert lim["RLIMIT_CPU"] == (7, 8)
    assert lim["RLIMIT_AS"] == (900 * 2**20, 900 * 2**20)
    assert lim["RLIMIT_FSIZE"] == (3 * 2**20, 3 * 2**20)
    assert lim["RLIMIT_CORE"] == (0, 0)
