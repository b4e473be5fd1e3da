"""The `bwrap` sandbox: what `process` holds, plus no network and no host files beyond the job's own.

Every test runs a real job inside bubblewrap; the module is skipped, saying
why, when bwrap is not installed or cannot create namespaces on this machine.
Network tests never send traffic anywhere: inside there is no interface but
loopback, so a connect fails at once.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from sandbox_helpers import (
    PY,
    count_processes,
    new_marker,
    pids_with_marker,
    script_job,
)

from engine.sandbox import SandboxJob, SandboxResult, make_sandbox
from engine.sandbox.bwrap import BwrapSandbox, bwrap_available
from engine.sandbox.cgroup import PidsCgroups

BWRAP_OK, BWRAP_WHY = bwrap_available()
CGROUPS = PidsCgroups().available
ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.bwrap
RUNS_WITHOUT_BWRAP = {"test_auto_falls_back_to_process_without_bwrap"}


@pytest.fixture(autouse=True)
def _needs_bwrap(request: pytest.FixtureRequest) -> None:
    if not BWRAP_OK and request.node.originalname not in RUNS_WITHOUT_BWRAP:
        pytest.skip(f"bwrap unusable: {BWRAP_WHY}")


def run(job: SandboxJob, sandbox: BwrapSandbox | None = None) -> SandboxResult:
    return asyncio.run((sandbox or BwrapSandbox()).run(job))


def answer_json(res: SandboxResult) -> dict:
    assert res.status == "ok", res
    assert res.answer is not None, res
    return json.loads(res.answer)


# Inside a job: try(fn) -> "ok: ..." or "ExcName: ..." for each attempt, dumped as JSON to answer.txt.
TRY = """
import json, os, socket, sys
out = {}
def attempt(name, fn):
    try:
        out[name] = "ok: " + repr(fn())[:200]
    except BaseException as exc:
        out[name] = type(exc).__name__ + ": " + str(exc)[:200]
"""


def tried(code: str, *args: str, **limits: float) -> dict[str, str]:
    res = run(
        script_job(
            TRY + code + "\njson.dump(out, open('answer.txt', 'w'))\n",
            args=args,
            **limits,
        )
    )
    return answer_json(res)


def _no_docker(monkeypatch: pytest.MonkeyPatch) -> None:
    """Docker cannot serve (as where no daemon answers), whether or not a daemon runs on this machine."""
    from engine.sandbox import docker as docker_mod

    monkeypatch.setattr(docker_mod, "docker_available", lambda *a, **k: (False, "no Docker daemon (the test says)"))


def test_make_sandbox_bwrap_and_auto(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_docker(monkeypatch)
    assert make_sandbox("bwrap").name == "bwrap"
    assert make_sandbox("auto").name == "bwrap"  # the strongest that works here, docker aside


def test_auto_falls_back_to_process_without_bwrap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from engine.sandbox import bwrap as bwrap_mod

    _no_docker(monkeypatch)
    monkeypatch.setattr(bwrap_mod, "bwrap_path", lambda: None)
    assert make_sandbox("auto").name == "process"
    with pytest.raises(RuntimeError, match="bwrap not installed"):
        make_sandbox("bwrap")


def test_clade_auto_sandboxes_narrows_and_orders_what_auto_may_choose(monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.sandbox import AUTO_ORDER, AUTO_ORDER_VARIABLE, auto_order, resolve_sandbox

    assert auto_order({}) == AUTO_ORDER == ("docker", "bwrap", "process")
    assert auto_order({AUTO_ORDER_VARIABLE: " process, bwrap "}) == ("bwrap", "process")  # strongest first
    for bad in ("podman", ",", "bwrap,gvisor"):
        with pytest.raises(ValueError, match=AUTO_ORDER_VARIABLE):
            auto_order({AUTO_ORDER_VARIABLE: bad})
    monkeypatch.setenv(AUTO_ORDER_VARIABLE, "process")  # docker would answer: it is not asked
    from engine.sandbox import docker as docker_mod

    monkeypatch.setattr(docker_mod, "docker_available", lambda *a, **k: pytest.fail("docker was probed"))
    name, why = resolve_sandbox("auto")
    assert name == "process" and f"not in {AUTO_ORDER_VARIABLE}=process" in why
    monkeypatch.setenv(AUTO_ORDER_VARIABLE, "docker")
    monkeypatch.setattr(docker_mod, "docker_available", lambda *a, **k: (False, "no Docker daemon (the test says)"))
    with pytest.raises(ValueError, match="no backend of CLADE_AUTO_SANDBOXES works: docker: no Docker daemon"):
        resolve_sandbox("auto")


def test_ordinary_numpy_job_is_ok() -> None:
    res = run(script_job("""
        import numpy as np
        a = np.arange(10)
        open('out.txt', 'w').write(str(int(a.sum())))
        import os
        os.rename('out.txt', 'answer.txt')
        print('done')
    """))  # fmt: skip
    assert res.status == "ok", res
    assert (res.returncode, res.answer, res.stdout_tail) == (0, b"45", "done\n")


def test_working_directory_is_cwd_home_and_only_writable_place() -> None:
    got = tried("""
attempt("cwd", os.getcwd)
attempt("home", lambda: os.environ["HOME"])
attempt("write_cwd", lambda: open("x.txt", "w").write("x"))
attempt("write_root", lambda: open("/newfile", "w").write("x"))
attempt("mkdir_root", lambda: os.mkdir("/newdir"))
attempt("write_usr", lambda: open("/usr/newfile", "w").write("x"))
attempt("write_prefix", lambda: open(os.path.join(sys.prefix, "newfile"), "w").write("x"))
attempt("caps", lambda: [l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff")][0])
attempt("listing", lambda: sorted(os.listdir("/")))
""")  # fmt: skip
    assert got["cwd"] == got["home"] == "ok: '/job'"
    assert got["write_cwd"].startswith("ok")
    for key in ("write_root", "mkdir_root", "write_usr", "write_prefix"):
        assert not got[key].startswith("ok"), (key, got[key])
    assert got["caps"] == "ok: '0000000000000000'"
    assert "'work'" not in got["listing"] and "'home'" not in got["listing"], got["listing"]


def prefix_folders_in(root: Path) -> list[str]:
    """The first folder, under `root`, of each Python prefix the sandbox binds (a venv in the checkout)."""
    names = set()
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix}:
        path = Path(prefix).resolve()
        if path.is_relative_to(root.resolve()) and path != root.resolve():
            names.add(path.relative_to(root.resolve()).parts[0])
    return sorted(names)


def test_host_files_outside_the_workdir_cannot_be_read(tmp_path: Path) -> None:
    token = uuid.uuid4().hex
    secret_tmp = tmp_path / "holdout.json"
    secret_tmp.write_text(token)
    secret_repo = ROOT / f".clade-bwrap-test-secret-{uuid.uuid4().hex}"
    secret_repo.write_text(token)
    try:
        got = tried("""
for i, p in enumerate(sys.argv[1:]):
    attempt(f"read{i}", lambda p=p: open(p).read())
attempt("ls_repo", lambda: os.listdir(os.path.dirname(sys.argv[2])))
attempt("ls_root_home", lambda: os.listdir("/root"))
attempt("shadow", lambda: open("/etc/shadow").read())
""", str(secret_tmp), str(secret_repo), str(ROOT / "engine" / "sandbox" / "process.py"))  # fmt: skip
    finally:
        secret_repo.unlink()
    assert token not in json.dumps(got)
    for key in ("read0", "read1", "read2", "shadow"):
        assert not got[key].startswith("ok"), (key, got[key])
    # The checkout is invisible, unless a venv inside it is the bound Python prefix: then the listing
    # holds exactly the mount point's first folder, and nothing of the checkout's own files.
    assert not got["ls_repo"].startswith("ok") or got["ls_repo"] == f"ok: {prefix_folders_in(ROOT)!r}", got["ls_repo"]
    assert got["ls_root_home"] in ("ok: ['.pyenv']", "ok: []") or not got["ls_root_home"].startswith("ok"), got[
        "ls_root_home"
    ]


@pytest.mark.slow
@pytest.mark.skipif(not CGROUPS, reason="an uncapped fork bomb as root is not safe to run")
def test_fork_bomb_is_contained() -> None:
    marker = new_marker()
    before = count_processes()
    res = run(script_job("""
        import os
        while True:
            try:
                os.fork()
            except OSError:
                pass
    """, args=(marker,), timeout_s=3, processes=32))  # fmt: skip
    assert res.status in ("timeout", "killed", "error"), res
    assert res.runtime_s < 6
    assert pids_with_marker(marker) == []
    assert count_processes() < before + 16


@pytest.mark.parametrize(
    "use_cgroup",
    [
        pytest.param(
            True,
            marks=pytest.mark.skipif(not CGROUPS, reason="no writable pids cgroup"),
        ),
        False,
    ],
    ids=["cgroup", "namespace-only"],
)
def test_daemonized_grandchild_does_not_survive(use_cgroup: bool) -> None:
    marker = new_marker()
    res = run(script_job("""
        import os, sys, time
        marker = sys.argv[1]
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv(sys.executable, [sys.executable, "-c",
                         "import time; open('daemon.up', 'w').close(); time.sleep(60)", marker])
            os._exit(0)
        os.wait()
        while not os.path.exists("daemon.up"):
            time.sleep(0.01)
        open("answer.txt", "w").write("parent done")
    """, args=(marker,), timeout_s=10), BwrapSandbox(use_cgroup=use_cgroup))  # fmt: skip
    assert res.status == "ok", res
    assert res.answer == b"parent done"
    assert res.runtime_s < 5  # did not wait for the daemon
    deadline = time.monotonic() + 30  # a guard: the loop ends as soon as the daemon is gone
    while pids_with_marker(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pids_with_marker(marker) == []


def test_timeout_kills_everything() -> None:
    marker = new_marker()
    t0 = time.monotonic()
    res = run(script_job("""
        import os, time
        os.fork()
        time.sleep(60)
    """, args=(marker,), timeout_s=1.5))  # fmt: skip
    assert res.status == "timeout", res
    assert res.reason.startswith("timed out after 1.5 s")
    assert time.monotonic() - t0 < 5
    assert pids_with_marker(marker) == []


def test_cancellation_kills_the_job(tmp_path: Path) -> None:
    marker = new_marker()
    job = script_job("import time\nopen('started', 'w').close()\ntime.sleep(60)\n",
                     args=(marker,), timeout_s=30)  # fmt: skip

    async def go() -> None:
        task = asyncio.create_task(BwrapSandbox(base_dir=tmp_path).run(job))
        deadline = time.monotonic() + 10
        while not list(tmp_path.glob("*/started")) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    assert pids_with_marker(marker) == []
    assert list(tmp_path.iterdir()) == []


# The process backend's behaviours, through bwrap.


def test_exit_code_and_signals_are_reported() -> None:
    res = run(script_job("import os\nos._exit(3)\n"))
    assert (res.status, res.returncode) == ("error", 3)
    res = run(script_job("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"))
    assert (res.status, res.returncode) == ("killed", -9)
    assert res.reason.startswith("killed by SIGKILL")
    res = run(script_job("import ctypes\nctypes.string_at(0)\n"))
    assert (res.status, res.returncode) == ("killed", -11)


def test_cpu_limit() -> None:
    res = run(script_job("while True:\n    pass\n", cpu_s=1, timeout_s=10))
    assert res.status == "killed", res
    assert res.returncode in (-24, -9)
    assert res.runtime_s < 4


def test_memory_and_file_size_limits() -> None:
    res = run(script_job("""
        blocks = []
        while True:
            blocks.append(bytearray(64 * 2**20))
    """, memory_mb=256, timeout_s=10))  # fmt: skip
    assert res.status in ("error", "killed"), res
    assert "MemoryError" in res.stderr_tail
    res = run(script_job("open('big.bin', 'wb').write(b'x' * (2 * 2**20))\n", file_size_mb=1))
    assert res.status != "ok"
    assert "File too large" in res.stderr_tail or "SIGXFSZ" in res.reason


def test_private_tmp_is_size_capped() -> None:
    res = run(script_job("""
        import os
        with open('/tmp/fill', 'wb') as f:
            try:
                for _ in range(200):
                    f.write(b'x' * 2**20)
                    f.flush()
            except OSError as exc:
                open('answer.txt', 'w').write(type(exc).__name__ + str(exc.errno))
    """, file_size_mb=512, timeout_s=20))  # fmt: skip
    assert res.status == "ok", res
    assert res.answer is not None and res.answer.startswith(b"OSError"), res


def test_answer_symlink_to_host_file_is_refused() -> None:
    res = run(script_job("import os\nos.symlink('/etc/hostname', 'answer.txt')\n"))
    assert res.answer is None and "outside" in res.reason


def test_jobs_run_concurrently() -> None:
    async def many() -> list[SandboxResult]:
        sb = BwrapSandbox()
        job = script_job("import time\ntime.sleep(1)\nopen('answer.txt','w').write('z')\n")
        return await asyncio.gather(*(sb.run(job) for _ in range(4)))

    t0 = time.monotonic()
    results = asyncio.run(many())
    assert [r.answer for r in results] == [b"z"] * 4
    assert time.monotonic() - t0 < 2.5


def test_command_that_cannot_start_is_an_error() -> None:
    res = run(SandboxJob(files={}, command=["./no-such-program"], answer_file="a"))
    assert res.status == "error"
    assert "no-such-program" in res.stderr_tail


def test_python_on_path_is_the_engines_interpreter() -> None:
    res = run(SandboxJob(files={}, command=["python", "-c",
              "import sys; open('a', 'w').write(sys.executable)"], answer_file="a"))  # fmt: skip
    assert res.status == "ok", res
    assert res.answer == PY.encode() or os.path.realpath(res.answer.decode()) == os.path.realpath(PY)


def test_job_is_unprivileged_where_user_namespaces_work() -> None:
    from engine.sandbox import bwrap as bwrap_mod

    exe = bwrap_mod.bwrap_path()
    assert exe is not None
    userns, _ = bwrap_mod._probe(exe)
    if not userns:
        pytest.skip("no user namespaces here: the job keeps the engine's uid (without capabilities)")
    got = tried("""
import ctypes
attempt("ids", lambda: (os.getuid(), os.getgid()))
libc = ctypes.CDLL(None, use_errno=True)
attempt("new_userns", lambda: libc.unshare(0x10000000))  # CLONE_NEWUSER; -1 when refused
""")  # fmt: skip
    assert got["ids"] == "ok: (65534, 65534)"
    if "--disable-userns" in userns:
        assert got["new_userns"] == "ok: -1"
