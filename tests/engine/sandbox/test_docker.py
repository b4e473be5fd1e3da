"""The `docker` sandbox.

Three layers:
- `container_options` (pure): what every container is created with, checked
  field by field and fed through the docker SDK's own argument conversion;
- `DockerSandbox` driven by a fake client (threads standing in for the
  daemon): statuses, timeout, cancellation, output bounds, removal, the
  stale-container sweep. These run everywhere, daemon or not;
- real containers (marker `docker`), skipped, saying why, when no Docker
  daemon answers here. They never send traffic anywhere: the network test
  expects the connect to fail at once.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import re
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from engine.sandbox import AUTO_ORDER_VARIABLE, SandboxJob, SandboxLimits, docker_build, docker_daemon, resolve_sandbox
from engine.sandbox.docker import (
    DEFAULT_IMAGE,
    IMAGE_PATH,
    JOB_DIR,
    DockerSandbox,
    container_options,
    docker_available,
    ensure_image,
    job_user,
)
from engine.sandbox.docker_build import COMPILERS_IMAGE, RECIPE_LABEL, RECIPES, Recipe, debian_mirror
from tests.conftest import REPO

docker = pytest.importorskip("docker")  # its submodule docker.errors comes with it
import requests.exceptions

PY = sys.executable
ALLOWED_ENV = {
    "PATH",
    "HOME",
    "TMPDIR",
    "LANG",
    "PYTHONHASHSEED",
    "PYTHONDONTWRITEBYTECODE",
    "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
}


def script_job(code: str, answer_file: str = "answer.txt", **limits: Any) -> SandboxJob:
    return SandboxJob(
        files={"runner.py": textwrap.dedent(code).encode()},
        command=[PY, "runner.py"],
        answer_file=answer_file,
        limits=SandboxLimits(**limits),
    )


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


# ----------------------------------------------------------------------------- container_options


def test_container_options_hold_the_limits(tmp_path: Path) -> None:
    job = script_job("pass", timeout_s=7, cpu_s=5, memory_mb=300, file_size_mb=3, processes=17)
    opts = container_options(job, str(tmp_path), "img:1", 1.5, 4242)
    assert opts["image"] == "img:1"
    assert opts["network_mode"] == "none"
    assert opts["read_only"] is True
    assert opts["pids_limit"] == 17
    assert opts["mem_limit"] == opts["memswap_limit"] == 300 * 2**20
    assert opts["nano_cpus"] == 1_500_000_000
    assert opts["cap_drop"] == ["ALL"]
    assert opts["security_opt"] == ["no-new-privileges"]
    assert opts["user"] == "65534:65534"
    assert opts["init"] is True
    assert opts["auto_remove"] is False
    assert opts["stdin_open"] is False
    assert opts["detach"] is True
    assert opts["use_config_proxy"] is False
    assert opts["working_dir"] == JOB_DIR == "/job"
    assert opts["tmpfs"] == {"/tmp": "size=64m,mode=1777"}
    ulimits = {u["name"]: (u["soft"], u["hard"]) for u in opts["ulimits"]}
    assert ulimits == {"cpu": (5, 6), "fsize": (3 * 2**20, 3 * 2**20), "core": (0, 0)}
    # The work directory is the only host path in the container, and the only writable one.
    assert opts["mounts"] == [{"Type": "bind", "Source": str(tmp_path), "Target": "/job", "ReadOnly": False}]
    assert "volumes" not in opts and "binds" not in opts and "privileged" not in opts
    labels = opts["labels"]
    assert labels["clade.sandbox"] == "1"
    assert labels["clade.engine_pid"] == "4242"
    assert labels["clade.host"]


def test_container_options_cpus_default_to_the_jobs_limits(tmp_path: Path) -> None:
    limits = SandboxLimits()
    job = script_job("pass")
    opts = container_options(job, str(tmp_path), "img", None, 1)
    assert opts["nano_cpus"] == round(getattr(limits, "cpus", 1.0) * 1e9)
    with pytest.raises(ValueError, match="cpus"):
        container_options(job, str(tmp_path), "img", 0, 1)


def test_a_tasks_data_is_bound_read_only_under_clade_data_and_nothing_else_is(tmp_path: Path) -> None:
    from engine.lang.toolchain import Toolchain
    from engine.sandbox import make_sandbox

    plain = container_options(script_job("pass"), str(tmp_path), "img", None, 1)
    assert [m["Target"] for m in plain["mounts"]] == [JOB_DIR]
    opts = container_options(script_job("pass"), str(tmp_path), "img", None, 1, mounts=("/root/.cache/x",))
    assert opts["mounts"][1:] == [
        {"Type": "bind", "Source": "/root/.cache/x", "Target": "/clade-data/root/.cache/x", "ReadOnly": True}
    ]
    # make_sandbox turns a task's `data` toolchains into mounts and never binds a compiler into docker
    data = Toolchain("cpp", "catch main", "/srv/main.o", "data", "", ("/srv/main.o",))
    compiler = Toolchain("go", "go", "/opt/go/bin/go", "local", "go1.23", ("/opt/go",))
    box = make_sandbox("docker", image="img", toolchains=(data, compiler), client=FakeClient(images={"img"}))
    assert box.mounts == ("/srv/main.o",)


def test_container_environment_is_an_allow_list(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("HTTPS_PROXY", "http://user:pw@proxy:3128")
    monkeypatch.setenv("PYTHONPATH", "/somewhere")
    monkeypatch.setenv("LC_ALL", "xx_XX.UTF-8")
    env = container_options(script_job("pass"), str(tmp_path), "img", 1.0, 1)["environment"]
    assert set(env) <= ALLOWED_ENV
    assert "sk-secret" not in json.dumps(env) and "secret" not in json.dumps(env)
    assert env["PATH"] == IMAGE_PATH
    assert env["HOME"] == env["TMPDIR"] == "/job"
    assert env["LANG"] == "C.UTF-8"
    assert str(Path(PY).parent) not in env["PATH"]  # a host path means nothing in the image


@pytest.mark.parametrize(
    ("argv0", "expected"),
    [
        (sys.executable, "python3"),
        ("python", "python3"),
        ("python3", "python3"),
        ("/usr/bin/python3.11", "python3"),
        ("sh", "sh"),
        ("/bin/echo", "/bin/echo"),
    ],
)
def test_command_maps_the_interpreter_to_the_images_python(tmp_path: Path, argv0: str, expected: str) -> None:
    job = SandboxJob(files={}, command=[argv0, "runner.py", "--x"], answer_file="a")
    opts = container_options(job, str(tmp_path), "img", 1.0, 1)
    assert opts["entrypoint"] == [expected]
    assert opts["command"] == ["runner.py", "--x"]


def test_container_options_pass_the_sdks_own_checks(tmp_path: Path) -> None:
    """The options go through docker-py's create() conversion unchanged in meaning."""
    from docker.models.containers import _create_container_args

    job = script_job("pass", memory_mb=128, processes=9)
    opts = container_options(job, str(tmp_path), "img", 2.0, 7)
    args = _create_container_args(dict(opts, version="1.44"))
    host = args["host_config"]
    assert host["NetworkMode"] == "none"
    assert host["ReadonlyRootfs"] is True
    assert host["PidsLimit"] == 9
    assert host["Memory"] == host["MemorySwap"] == 128 * 2**20
    assert host["NanoCpus"] == 2_000_000_000
    assert host["CapDrop"] == ["ALL"]
    assert host["SecurityOpt"] == ["no-new-privileges"]
    assert host["Init"] is True
    assert host["Mounts"][0]["Target"] == "/job"
    assert host["Tmpfs"] == {"/tmp": "size=64m,mode=1777"}
    assert {u["Name"] for u in host["Ulimits"]} == {"cpu", "fsize", "core"}
    assert host["LogConfig"]["Type"] == "json-file"
    assert "Binds" not in host and not host.get("Privileged")
    assert args["user"] == "65534:65534"
    assert args["entrypoint"] == ["python3"]
    assert args["detach"] is True and args["stdin_open"] is False


# ----------------------------------------------------------------------------- no daemon


def test_no_daemon_is_said_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-docker.sock")
    ok, why = docker_available()
    assert not ok
    assert "no Docker daemon answers" in why and "\n" not in why and len(why) < 300
    assert docker_available(DEFAULT_IMAGE, build=False)[0] is False
    with pytest.raises(RuntimeError, match="docker sandbox unavailable: no Docker daemon answers"):
        DockerSandbox()


# ----------------------------------------------------------------------------- fake daemon


class FakeStream:
    def __init__(self, q: queue.Queue[bytes | None]) -> None:
        self.q = q

    def __iter__(self) -> FakeStream:
        return self

    def __next__(self) -> bytes:
        item = self.q.get()
        if item is None:
            self.q.put(None)
            raise StopIteration
        return item

    def close(self) -> None:
        self.q.put(None)


class FakeContainer:
    """A container whose 'process' is `client.script(self)` on a thread; returns the exit code."""

    def __init__(self, client: FakeClient, options: dict[str, Any]) -> None:
        self.client = client
        self.options = options
        self.id = uuid.uuid4().hex
        self.labels = dict(options.get("labels") or {})
        self.attrs: dict[str, Any] = {"State": {"OOMKilled": False}}
        self.status = "created"
        self.exit_code: int | None = None
        self.stopped = threading.Event()
        self.killed = False
        self.removed = False
        self._lock = threading.Lock()
        self._queues: dict[bool, queue.Queue[bytes | None]] = {True: queue.Queue(), False: queue.Queue()}
        self._logged = {True: bytearray(), False: bytearray()}  # what the daemon's log file holds

    @property
    def workdir(self) -> str:
        return self.options["mounts"][0]["Source"]

    def emit(self, data: bytes, stdout: bool = True) -> None:
        self._queues[stdout].put(data)
        self._logged[stdout] += data

    def start(self) -> None:
        if self.client.start_error is not None:
            raise self.client.start_error
        self.status = "running"
        threading.Thread(target=lambda: self.stop(self.client.script(self)), daemon=True).start()

    def stop(self, code: int | None) -> None:
        with self._lock:
            if self.stopped.is_set():
                return
            self.exit_code = 0 if code is None else code
            self.status = "exited"
            for q in self._queues.values():
                q.put(None)
            self.stopped.set()

    def wait(self, timeout: float | None = None) -> dict[str, Any]:
        if self.client.wait_error is not None:
            raise self.client.wait_error
        self.stopped.wait()
        return {"StatusCode": self.exit_code, "Error": None}

    def logs(
        self, *, stdout: bool, stderr: bool, stream: bool = False, follow: bool = False, tail: int | None = None
    ) -> FakeStream | bytes:
        assert stdout != stderr
        if not stream:  # the last `tail` lines, as the daemon reads them from its log file
            assert tail is not None and not follow
            return b"".join(bytes(self._logged[stdout]).splitlines(keepends=True)[-tail:])
        assert follow
        return FakeStream(self._queues[stdout])

    def kill(self) -> None:
        if self.status != "running":
            raise docker.errors.APIError("409 Client Error: container is not running")
        self.killed = True
        self.stop(137)

    def reload(self) -> None:
        pass

    def remove(self, force: bool = False) -> None:
        if self.removed:
            raise docker.errors.NotFound("404 Client Error: No such container")
        if self.status == "running":
            assert force
            self.killed = True
            self.stop(137)
        self.removed = True


class FakeContainers:
    def __init__(self, client: FakeClient) -> None:
        self.client = client
        self.all: list[FakeContainer] = []

    def create(self, **options: Any) -> FakeContainer:
        if self.client.create_error is not None:
            raise self.client.create_error
        self.client.created_options.append(options)
        c = FakeContainer(self.client, options)
        self.all.append(c)
        return c

    def list(
        self, all: bool = False, filters: dict[str, Any] | None = None, ignore_removed: bool = False
    ) -> list[FakeContainer]:
        wanted = (filters or {}).get("label", [])
        wanted = [wanted] if isinstance(wanted, str) else wanted
        pairs = [w.partition("=")[::2] for w in wanted]
        return [c for c in self.all if not c.removed and all_match(c.labels, pairs) and (all or c.status == "running")]


def all_match(labels: dict[str, str], pairs: list[tuple[str, str]]) -> bool:
    return all(labels.get(k) == v for k, v in pairs)


class FakeImages:
    def __init__(self, present: set[str]) -> None:
        self.present = present
        self.stale: set[str] = set()  # present, but made from another recipe (or by the Dockerfile)
        self.built: list[dict[str, Any]] = []

    def get(self, name: str) -> object:
        if name not in self.present:
            raise docker.errors.ImageNotFound(f"No such image: {name}")
        recipe = RECIPES.get(name)
        labels = {RECIPE_LABEL: recipe.digest} if recipe is not None and name not in self.stale else {}
        return SimpleNamespace(attrs={"Config": {"Labels": labels}})

    def build(self, **kwargs: Any) -> tuple[object, list[Any]]:
        self.built.append(kwargs)
        self.present.add(kwargs["tag"])
        return object(), []


class FakeClient:
    def __init__(self, script: Any = None, images: set[str] | None = None) -> None:
        self.script = script or (lambda c: 0)
        self.containers = FakeContainers(self)
        self.images = FakeImages({DEFAULT_IMAGE} if images is None else images)
        self.created_options: list[dict[str, Any]] = []
        self.create_error: BaseException | None = None
        self.start_error: BaseException | None = None
        self.wait_error: BaseException | None = None
        self.closed = False
        self.security_options = ["name=seccomp,profile=builtin"]

    def ping(self) -> bool:
        return True

    def info(self) -> dict[str, Any]:
        return {"SecurityOptions": list(self.security_options)}

    def close(self) -> None:
        self.closed = True

    def live(self) -> list[FakeContainer]:
        return [c for c in self.containers.all if not c.removed]


def fake_sandbox(tmp_path: Path, script: Any = None, **kwargs: Any) -> tuple[DockerSandbox, FakeClient]:
    client = FakeClient(script)
    return DockerSandbox(client=client, base_dir=tmp_path, **kwargs), client


def run_fake(sandbox: DockerSandbox, job: SandboxJob | None = None) -> Any:
    return asyncio.run(sandbox.run(job or script_job("pass")))


def write_answer(c: FakeContainer, text: bytes = b"42") -> int:
    Path(c.workdir, "answer.txt").write_bytes(text)
    c.emit(b"hello\n")
    c.emit(b"careful\n", stdout=False)
    return 0


def test_fake_ok_job_reads_the_answer_after_removal(tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    def script(c: FakeContainer) -> int:
        seen["files"] = sorted(os.listdir(c.workdir))
        return write_answer(c)

    sandbox, client = fake_sandbox(tmp_path, script)
    res = run_fake(sandbox)
    assert res.status == "ok" and res.returncode == 0 and res.reason == ""
    assert res.answer == b"42"
    assert res.stdout_tail == "hello\n" and res.stderr_tail == "careful\n"
    assert seen["files"] == ["runner.py"]
    assert client.live() == [] and client.containers.all[0].removed
    assert os.listdir(tmp_path) == []  # the host work directory is gone too
    opts = client.created_options[0]
    assert opts["labels"]["clade.engine_pid"] == str(os.getpid())
    assert opts["network_mode"] == "none" and opts["user"] == job_user()


def test_fake_work_directory_belongs_to_the_job_user(tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    def script(c: FakeContainer) -> int:
        seen["owner"] = {os.stat(p).st_uid for p in (c.workdir, Path(c.workdir, "runner.py"))}
        seen["outer_mode"] = os.stat(Path(c.workdir).parent).st_mode & 0o777
        seen["user"] = c.options["user"]
        return 0

    sandbox, _ = fake_sandbox(tmp_path, script)
    run_fake(sandbox)
    if os.geteuid() == 0:
        assert seen["user"] == "65534:65534" and seen["owner"] == {65534}
    else:
        assert seen["user"] == f"{os.getuid()}:{os.getgid()}" and seen["owner"] == {os.getuid()}
    assert seen["outer_mode"] == 0o700  # no other local user reaches the work directory


def test_job_user_is_never_the_engines_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert job_user() == "65534:65534"
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(os, "getuid", lambda: 1000)
    monkeypatch.setattr(os, "getgid", lambda: 1001)
    assert job_user() == "1000:1001"  # the engine can delete whatever the job leaves
    assert job_user(rootless=True) == "0:0"  # a rootless daemon's root is the engine's user outside


def test_fake_rootless_daemon_runs_jobs_as_its_root(tmp_path: Path) -> None:
    client = FakeClient()
    client.security_options.append("name=rootless")
    sandbox = DockerSandbox(client=client, base_dir=tmp_path)
    run_fake(sandbox)
    assert client.created_options[0]["user"] == "0:0"
    assert client.created_options[0]["cap_drop"] == ["ALL"]


@pytest.mark.parametrize(
    ("code", "status", "returncode", "reason"),
    [
        (3, "error", 3, "exit code 3"),
        (139, "killed", -11, "killed by SIGSEGV"),
        (152, "killed", -24, "CPU time limit of 10 s"),
        (137, "killed", -9, "killed by SIGKILL"),
    ],
)
def test_fake_exit_codes_map_like_the_process_sandbox(
    tmp_path: Path, code: int, status: str, returncode: int, reason: str
) -> None:
    sandbox, _ = fake_sandbox(tmp_path, lambda c: code)
    res = run_fake(sandbox)
    assert (res.status, res.returncode) == (status, returncode)
    assert reason in res.reason
    assert "no answer file 'answer.txt'" in res.reason


def test_fake_command_that_cannot_start(tmp_path: Path) -> None:
    def not_found(c: FakeContainer) -> int:  # what the container's init says and does
        c.emit(b"[FATAL tini (7)] exec no-such-prog failed: No such file or directory\n", stdout=False)
        return 127

    sandbox, _ = fake_sandbox(tmp_path, not_found)
    res = run_fake(sandbox, SandboxJob(files={}, command=["no-such-prog"], answer_file="a"))
    assert (res.status, res.returncode) == ("error", None)
    assert res.reason.startswith("could not start 'no-such-prog': No such file or directory")


def test_fake_out_of_memory_is_named(tmp_path: Path) -> None:
    def script(c: FakeContainer) -> int:
        c.attrs["State"]["OOMKilled"] = True
        return 137

    sandbox, _ = fake_sandbox(tmp_path, script)
    res = run_fake(sandbox, script_job("pass", memory_mb=64))
    assert res.status == "killed"
    assert "out of memory (limit 64 MB)" in res.reason


def test_fake_timeout_kills_and_removes(tmp_path: Path) -> None:
    def hang(c: FakeContainer) -> None:
        c.emit(b"working\n")
        c.stopped.wait()

    sandbox, client = fake_sandbox(tmp_path, hang)
    t0 = time.monotonic()
    res = run_fake(sandbox, script_job("pass", timeout_s=0.3))
    assert time.monotonic() - t0 < 5
    assert res.status == "timeout"
    assert res.reason.startswith("timed out after 0.3 s")
    assert res.stdout_tail == "working\n"
    c = client.containers.all[0]
    assert c.killed and c.removed
    assert os.listdir(tmp_path) == []


def test_fake_output_is_bounded(tmp_path: Path) -> None:
    def chatty(c: FakeContainer) -> int:
        for _ in range(200):
            c.emit(b"x" * 65536)
            c.emit(b"y" * 65536, stdout=False)
        c.emit(b"END")
        return 0

    sandbox, _ = fake_sandbox(tmp_path, chatty)
    res = run_fake(sandbox, script_job("pass", output_bytes=1000))
    assert len(res.stdout_tail) == 1000 and res.stdout_tail.endswith("END")
    assert len(res.stderr_tail) == 1000


def test_fake_cancellation_removes_the_container_first(tmp_path: Path) -> None:
    def hang(c: FakeContainer) -> None:
        c.stopped.wait()

    sandbox, client = fake_sandbox(tmp_path, hang)

    async def main() -> None:
        task = asyncio.create_task(sandbox.run(script_job("pass", timeout_s=60)))
        for _ in range(500):
            if client.containers.all and client.containers.all[0].status == "running":
                break
            await asyncio.sleep(0.01)
        assert client.containers.all[0].status == "running"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert client.containers.all[0].removed  # before the cancellation reached us

    asyncio.run(main())
    assert client.live() == []
    assert os.listdir(tmp_path) == []


def test_fake_second_cancellation_still_cleans_up(tmp_path: Path) -> None:
    """As at asyncio.run's shutdown: cancelled once, then again while removing the container."""

    def hang(c: FakeContainer) -> None:
        c.stopped.wait()

    sandbox, client = fake_sandbox(tmp_path, hang)
    removing = threading.Event()

    async def main() -> None:
        task = asyncio.create_task(sandbox.run(script_job("pass", timeout_s=60)))
        while not (client.containers.all and client.containers.all[0].status == "running"):
            await asyncio.sleep(0.01)
        c = client.containers.all[0]
        real_remove = c.remove

        def slow_remove(force: bool = False) -> None:
            removing.set()
            time.sleep(0.3)
            real_remove(force=force)

        c.remove = slow_remove  # type: ignore[method-assign]
        task.cancel()
        while not removing.is_set():
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert c.removed

    asyncio.run(main())
    assert client.live() == []
    assert os.listdir(tmp_path) == []


def test_fake_cancellation_during_create_still_removes(tmp_path: Path) -> None:
    sandbox, client = fake_sandbox(tmp_path, lambda c: 0)
    entered, release = threading.Event(), threading.Event()
    real_create = client.containers.create

    def slow_create(**options: Any) -> FakeContainer:
        entered.set()
        release.wait(5)
        return real_create(**options)

    client.containers.create = slow_create  # type: ignore[method-assign]

    async def main() -> None:
        task = asyncio.create_task(sandbox.run(script_job("pass")))
        while not entered.is_set():
            await asyncio.sleep(0.01)
        task.cancel()
        await asyncio.sleep(0.05)
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert len(client.containers.all) == 1 and client.containers.all[0].removed


def test_fake_daemon_errors_are_one_line_results(tmp_path: Path) -> None:
    sandbox, client = fake_sandbox(tmp_path, lambda c: 0)
    client.create_error = docker.errors.ImageNotFound("No such image: clade-sandbox:py3.11")
    res = run_fake(sandbox)
    assert res.status == "error" and res.returncode is None
    assert res.reason.startswith("docker: could not create the container: No such image")

    client.create_error = None
    client.start_error = docker.errors.APIError("500 Server Error: OCI runtime create failed")
    res = run_fake(sandbox)
    assert res.status == "error" and "could not start" in res.reason

    client.start_error = None
    client.wait_error = requests.exceptions.ConnectionError("('Connection aborted.', RemoteDisconnected())")
    res = run_fake(sandbox)
    assert res.status == "error"
    assert res.reason.startswith("docker: lost the container: ") and "\n" not in res.reason
    assert client.live() == []
    assert os.listdir(tmp_path) == []


def test_fake_jobs_run_concurrently(tmp_path: Path) -> None:
    def slow(c: FakeContainer) -> int:
        time.sleep(0.4)
        return write_answer(c, c.options["labels"]["clade.engine_pid"].encode())

    sandbox, client = fake_sandbox(tmp_path, slow)

    async def main() -> list[Any]:
        return await asyncio.gather(*(sandbox.run(script_job("pass")) for _ in range(8)))

    t0 = time.monotonic()
    results = asyncio.run(main())
    assert time.monotonic() - t0 < 3  # not 8 x 0.4 s one after another
    assert all(r.ok for r in results)
    assert len(client.containers.all) == 8 and client.live() == []


def test_fake_stale_containers_of_dead_engines_are_removed(tmp_path: Path) -> None:
    import socket

    client = FakeClient()
    host = socket.gethostname()

    def leftover(pid: int, on_host: str = host) -> FakeContainer:
        c = FakeContainer(
            client,
            {"labels": {"clade.sandbox": "1", "clade.engine_pid": str(pid), "clade.host": on_host}},
        )
        c.status = "running"
        client.containers.all.append(c)
        return c

    dead = leftover(dead_pid())
    alive = leftover(os.getpid())
    elsewhere = leftover(dead_pid(), on_host="another-host")
    stale_dir = tmp_path / f"clade-docker-{dead_pid()}-abc"
    stale_dir.mkdir()
    DockerSandbox(client=client, base_dir=tmp_path)
    assert dead.removed
    assert not alive.removed and not elsewhere.removed
    assert not stale_dir.exists()


def test_fake_close_removes_what_is_left_and_closes_the_client(tmp_path: Path) -> None:
    sandbox, client = fake_sandbox(tmp_path)
    leaked = client.containers.create(labels={"clade.instance": sandbox._instance})
    leaked.status = "running"
    other = client.containers.create(labels={"clade.instance": "someone-else"})
    sandbox.close()
    assert leaked.removed and not other.removed
    assert client.closed
    sandbox.close()  # idempotent


def test_fake_missing_images(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(docker_daemon, "offline_buildable", lambda recipe: (False, "no debootstrap here (test)"))
    client = FakeClient(images=set())
    with pytest.raises(RuntimeError, match=r"docker pull someone/image:1"):
        ensure_image(client, "someone/image:1")
    with pytest.raises(RuntimeError, match="docker sandbox unavailable: .*docker pull"):
        DockerSandbox("someone/image:1", client=client, base_dir=tmp_path)
    assert client.images.built == []  # never pulled nor built behind the user's back
    with pytest.raises(RuntimeError, match=r"could not build image .*compilers.*no debootstrap here \(test\)"):
        ensure_image(client, COMPILERS_IMAGE)  # no Dockerfile for it: offline or not at all
    ensure_image(client, DEFAULT_IMAGE)  # no offline build: the Dockerfile, through the registry
    assert [b["tag"] for b in client.images.built] == [DEFAULT_IMAGE]
    assert Path(client.images.built[0]["path"], "Dockerfile").is_file()


def test_fake_stale_image_is_used_when_it_cannot_be_rebuilt(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(docker_daemon, "offline_buildable", lambda recipe: (False, "no debootstrap here (test)"))
    client = FakeClient(images={DEFAULT_IMAGE})
    client.images.stale.add(DEFAULT_IMAGE)
    ensure_image(client, DEFAULT_IMAGE)
    assert client.images.built == []


# ----------------------------------------------------------------------------- a real daemon

DOCKER_OK, DOCKER_WHY = docker_available(DEFAULT_IMAGE)


@pytest.fixture(scope="module")
def real_sandbox() -> Any:
    sandbox = DockerSandbox()
    yield sandbox
    sandbox.close()


def our_containers(label: str) -> list[Any]:
    client = docker.from_env()
    try:
        return client.containers.list(all=True, filters={"label": label}, ignore_removed=True)  # one gone meanwhile
    finally:
        client.close()


def run_real(sandbox: DockerSandbox, job: SandboxJob) -> Any:
    return asyncio.run(sandbox.run(job))


@pytest.mark.docker
@pytest.mark.skipif(not DOCKER_OK, reason=f"no Docker daemon: {DOCKER_WHY}")
class TestRealDocker:
    def test_ok_job_with_answer(self, real_sandbox: DockerSandbox) -> None:
        res = run_real(
            real_sandbox,
            script_job(
                """
                import os, sys, numpy
                print("out", os.getuid(), os.getcwd())
                print("err", file=sys.stderr)
                open("answer.txt", "w").write(str(numpy.arange(4).sum()))
                """
            ),
        )
        assert res.status == "ok", res
        assert res.answer == b"6"
        assert res.stdout_tail == f"out {real_sandbox.user.split(':')[0]} /job\n"
        assert res.stderr_tail == "err\n"

    def test_exit_code(self, real_sandbox: DockerSandbox) -> None:
        res = run_real(real_sandbox, script_job("import sys; sys.exit(3)"))
        assert (res.status, res.returncode) == ("error", 3)
        assert "exit code 3" in res.reason

    def test_command_not_found(self, real_sandbox: DockerSandbox) -> None:
        res = run_real(real_sandbox, SandboxJob(files={}, command=["no-such-prog"], answer_file="a"))
        assert (res.status, res.returncode) == ("error", None)
        assert res.reason.startswith("could not start 'no-such-prog':")

    def test_cpu_time_limit(self, real_sandbox: DockerSandbox) -> None:
        res = run_real(real_sandbox, script_job("while True: pass", cpu_s=1, timeout_s=30))
        assert res.status == "killed"
        assert "CPU time limit of 1 s" in res.reason

    def test_timeout(self, real_sandbox: DockerSandbox) -> None:
        t0 = time.monotonic()
        res = run_real(real_sandbox, script_job("while True: pass", timeout_s=2))
        assert res.status == "timeout"
        assert res.reason.startswith("timed out after 2.0 s")
        assert time.monotonic() - t0 < 30

    def test_memory_bomb_is_killed(self, real_sandbox: DockerSandbox) -> None:
        res = run_real(
            real_sandbox,
            script_job(
                """
                hoard = []
                while True:
                    hoard.append(b"\\x01" * (8 * 2**20))
                """,
                memory_mb=128,
                timeout_s=30,
            ),
        )
        assert res.status == "killed", res
        # "out of memory (limit 128 MB), killed by SIGKILL"; some kernel/daemon pairs fail to report OOMKilled
        assert "SIGKILL" in res.reason

    def test_no_network(self, real_sandbox: DockerSandbox) -> None:
        res = run_real(
            real_sandbox,
            script_job(
                """
                import json, socket
                out = {}
                try:
                    socket.create_connection(("1.1.1.1", 53), timeout=3).close()
                    out["connect"] = "connected"
                except OSError as e:
                    out["connect"] = type(e).__name__
                try:
                    socket.getaddrinfo("pypi.org", 443)
                    out["dns"] = "resolved"
                except OSError as e:
                    out["dns"] = type(e).__name__
                out["interfaces"] = sorted(n for _, n in socket.if_nameindex())
                open("answer.txt", "w").write(json.dumps(out))
                """
            ),
        )
        assert res.status == "ok", res
        found = json.loads(res.answer)
        assert found["connect"] != "connected"
        assert found["dns"] != "resolved"
        assert found["interfaces"] == ["lo"]

    def test_writes_outside_job_fail(self, real_sandbox: DockerSandbox) -> None:
        res = run_real(
            real_sandbox,
            script_job(
                """
                import json
                out = {}
                for path in ("/etc/x", "/usr/x", "/x", "/root/x", "/var/x", "/tmp/x", "/job/x"):
                    try:
                        open(path, "w").write("x")
                        out[path] = "written"
                    except OSError as e:
                        out[path] = type(e).__name__
                open("answer.txt", "w").write(json.dumps(out))
                """
            ),
        )
        found = json.loads(res.answer)
        assert found.pop("/tmp/x") == "written"  # the private tmpfs
        assert found.pop("/job/x") == "written"
        assert all(v != "written" for v in found.values()), found

    def test_environment_has_no_secrets(self, real_sandbox: DockerSandbox, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leak")
        res = run_real(
            real_sandbox,
            script_job("import json, os; open('answer.txt', 'w').write(json.dumps(dict(os.environ)))"),
        )
        env = json.loads(res.answer)
        assert "OPENAI_API_KEY" not in env and "sk-must-not-leak" not in res.answer.decode()
        client = docker.from_env()
        try:  # what the image itself sets (PYTHON_VERSION, ...) is not the engine's
            image_env = {e.partition("=")[0] for e in client.images.get(DEFAULT_IMAGE).attrs["Config"]["Env"]}
        finally:
            client.close()
        assert set(env) - image_env - {"HOSTNAME"} <= ALLOWED_ENV

    def test_processes_are_capped(self, real_sandbox: DockerSandbox) -> None:
        res = run_real(
            real_sandbox,
            script_job(
                """
                import threading, time
                n = 0
                try:
                    for _ in range(200):
                        threading.Thread(target=time.sleep, args=(5,), daemon=True).start()
                        n += 1
                except RuntimeError:
                    pass
                open("answer.txt", "w").write(str(n))
                """,
                processes=16,
            ),
        )
        assert res.status == "ok", res
        assert int(res.answer) < 16

    def test_output_is_bounded(self, real_sandbox: DockerSandbox) -> None:
        res = run_real(
            real_sandbox,
            script_job(
                "import sys\nfor _ in range(1000): sys.stdout.write('x' * 10000)\nprint('END')",
                output_bytes=500,
            ),
        )
        assert res.status == "ok"
        assert len(res.stdout_tail) <= 500 and res.stdout_tail.endswith("END\n")

    def test_container_is_gone_afterwards(self, real_sandbox: DockerSandbox) -> None:
        run_real(real_sandbox, script_job("print('hi')"))
        assert our_containers(f"clade.instance={real_sandbox._instance}") == []

    def test_cancellation_removes_the_container(self, real_sandbox: DockerSandbox) -> None:
        label = f"clade.instance={real_sandbox._instance}"

        async def main() -> None:
            task = asyncio.create_task(real_sandbox.run(script_job("import time; time.sleep(600)", timeout_s=600)))
            for _ in range(300):
                if any(c.status == "running" for c in await asyncio.to_thread(our_containers, label)):
                    break
                await asyncio.sleep(0.1)
            else:
                pytest.fail("the container never ran")
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert await asyncio.to_thread(our_containers, label) == []

        asyncio.run(main())

    def test_stale_containers_are_swept(self, real_sandbox: DockerSandbox) -> None:
        import socket

        client = docker.from_env()
        try:
            c = client.containers.create(
                DEFAULT_IMAGE,
                command=["sleep", "600"],
                labels={
                    "clade.sandbox": "1",
                    "clade.engine_pid": str(dead_pid()),
                    "clade.host": socket.gethostname(),
                },
                network_mode="none",
            )
            c.start()
            DockerSandbox().close()
            with pytest.raises(docker.errors.NotFound):
                client.containers.get(c.id)
        finally:
            try:
                client.containers.get(c.id).remove(force=True)
            except docker.errors.NotFound:
                pass
            client.close()


# ----------------------------------------------------------------------------- auto's choice, a real daemon


# why the absent recipe cannot be built: the dead mirror as root with debootstrap, else what is missing
CANNOT_BUILD = r"the Debian mirror http://127\.0\.0\.1:9/debian does not answer|needs root|debootstrap is not installed"


@pytest.fixture
def absent_recipe(monkeypatch: pytest.MonkeyPatch) -> str:
    """One of the sandbox's own images, not on the daemon, and a Debian mirror that does not answer."""
    name = f"clade-sandbox-test-{uuid.uuid4().hex[:8]}:absent"
    monkeypatch.setitem(RECIPES, name, Recipe(name, ("python3",)))
    monkeypatch.setattr(docker_build, "debian_mirror", lambda: "http://127.0.0.1:9/debian")
    return name


@pytest.mark.docker
@pytest.mark.skipif(not DOCKER_OK, reason=f"no Docker daemon: {DOCKER_WHY}")
class TestAutoChoice:
    @pytest.fixture(autouse=True)
    def _auto_may_choose_docker(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv(AUTO_ORDER_VARIABLE, raising=False)  # the suite's default leaves docker out

    def test_image_present_picks_docker(self) -> None:
        name, why = resolve_sandbox("auto")
        assert name == "docker", why

    def test_missing_unbuildable_image_falls_back_naming_why(self, absent_recipe: str) -> None:
        t0 = time.monotonic()
        name, why = resolve_sandbox("auto", absent_recipe)
        assert time.monotonic() - t0 < 10  # a probe, no build, no registry pull
        assert name in ("bwrap", "process")
        assert f"image {absent_recipe!r} is not built and cannot be built now" in why
        assert re.search(CANNOT_BUILD, why), why
        client = docker.from_env()
        try:
            assert client.images.list(name=absent_recipe.split(":")[0]) == []
        finally:
            client.close()

    def test_explicit_docker_says_what_to_do_in_one_line(self, absent_recipe: str, tmp_path: Path) -> None:
        with pytest.raises(RuntimeError) as caught:
            DockerSandbox(absent_recipe, base_dir=tmp_path)
        said = str(caught.value)
        assert "\n" not in said
        assert said.startswith(f"docker sandbox unavailable: could not build image {absent_recipe!r}")
        assert re.search(CANNOT_BUILD, said), said

    def test_user_image_missing_falls_back(self) -> None:
        name, why = resolve_sandbox("auto", "someone/not-here:1")
        assert name in ("bwrap", "process")
        assert "docker pull someone/not-here:1" in why

    def test_no_daemon_falls_back(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no.sock")
        name, why = resolve_sandbox("auto")
        assert name in ("bwrap", "process")
        assert "no Docker daemon answers" in why

    def test_image_has_python3_only_and_no_host_path_reaches_it(self, real_sandbox: DockerSandbox) -> None:
        client = docker.from_env()
        try:
            said = client.containers.run(
                DEFAULT_IMAGE, ["sh", "-c", "command -v python3; command -v python || echo none"], remove=True
            )
        finally:
            client.close()
        assert said.decode().split() == ["/usr/bin/python3", "none"]
        res = run_real(real_sandbox, script_job("import sys; open('answer.txt', 'w').write(sys.executable)"))
        assert res.status == "ok", res.stderr
        assert res.answer == b"/usr/bin/python3"  # the image's, though the job named the host's sys.executable


# ----------------------------------------------------------------------------- the offline build's pieces


def test_debian_mirror_is_the_one_apt_uses(tmp_path: Path) -> None:
    assert debian_mirror(str(tmp_path)) == "http://deb.debian.org/debian"  # nothing configured
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\n# URIs: http://commented.example/debian\nURIs: http://mirror.example/debian/\n"
        "Suites: bookworm\n\nTypes: deb\nURIs: http://mirror.example/debian-security\n"
    )
    assert debian_mirror(str(tmp_path)) == "http://mirror.example/debian"
    (tmp_path / "sources.list").write_text(
        "deb http://security.example/debian-security bookworm-security main\n"
        "deb [arch=amd64 signed-by=/k.gpg] https://local.example/debian bookworm main\n"
    )
    assert debian_mirror(str(tmp_path)) == "https://local.example/debian"


def test_recipe_digest_changes_with_the_packages() -> None:
    base = RECIPES[DEFAULT_IMAGE]
    assert base.digest == Recipe(DEFAULT_IMAGE, base.packages).digest
    assert base.digest != Recipe(DEFAULT_IMAGE, (*base.packages, "g++")).digest
    assert f"LABEL clade.recipe={base.digest}" in base.changes
    assert set(RECIPES[COMPILERS_IMAGE].packages) >= {"python3", "g++", "gfortran", "golang-go", "rustc"}


def test_prebuild_says_one_line_without_a_daemon(tmp_path: Path) -> None:
    env = dict(os.environ, DOCKER_HOST=f"unix://{tmp_path}/none.sock", PYTHONPATH=str(REPO))
    out = subprocess.run(
        [sys.executable, "-m", "engine.sandbox.docker_prebuild"], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 2
    assert out.stderr.startswith("error: no Docker daemon answers at unix://") and out.stderr.count("\n") == 1


@pytest.mark.docker
@pytest.mark.skipif(not DOCKER_OK, reason=f"no Docker daemon: {DOCKER_WHY}")
def test_prebuild_finds_the_current_image_in_seconds() -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    t0 = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-m", "engine.sandbox.docker_prebuild"], env=env, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"{DEFAULT_IMAGE}: ready (")
    if "building image" not in out.stderr:  # built by CI before, as it should be: found by its digest
        assert time.monotonic() - t0 < 10


def _compilers_current() -> tuple[bool, str]:
    if not DOCKER_OK:
        return False, f"no Docker daemon: {DOCKER_WHY}"
    client = docker.from_env()
    try:
        if docker_build.image_current(client, RECIPES[COMPILERS_IMAGE]):
            return True, ""
    finally:
        client.close()
    return False, f"{COMPILERS_IMAGE} not built (python -m engine.sandbox.docker_prebuild --compilers; .ci/run does)"


COMPILERS_OK, COMPILERS_WHY = _compilers_current()


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.skipif(not COMPILERS_OK, reason=COMPILERS_WHY)
def test_cpp_folder_builds_and_improves_under_docker(tmp_path: Path) -> None:
    from tests.conftest import run_cli
    from tests.engine.test_search_e2e import only_run, read

    folder = REPO / "tests" / "fixtures" / "tasks" / "shinka_cpp"
    out = run_cli(
        "--task", str(folder), "--sandbox", "docker", "--budget", "12", "--run-dir", str(tmp_path / "runs"), timeout=300
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    assert f"sandbox docker, image {COMPILERS_IMAGE} (the compilers)" in out.stdout
    assert "then compiled by g++ -fsyntax-only (in docker)" in out.stdout  # the compile check, in a container
    assert "Dev evaluations: 12 ok." in out.stdout
    final = re.search(r"final #\d+ +│ +([\d.]+)", out.stdout)
    seed = re.search(r"seed #0 +│ +([\d.]+)", out.stdout)
    assert final and seed and float(final[1]) > float(seed[1]), out.stdout[-2000:]
    workers = read(only_run(tmp_path / "runs"), "SELECT DISTINCT worker FROM evaluations WHERE split = 'dev'")
    assert {w for (w,) in workers} <= {"w0/docker", "w1/docker"} and workers  # the archive says docker ran them


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.skipif(not DOCKER_OK, reason=f"no Docker daemon: {DOCKER_WHY}")
def test_the_quickstart_search_runs_in_containers_when_a_daemon_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 28's must-hold: with a daemon and no registry, the Quickstart's search (budget 40 here) exits 0 in
    docker, chosen by auto and said in the header, every evaluation ok in a container."""
    from tests.conftest import run_cli
    from tests.engine.test_search_e2e import only_run, read

    monkeypatch.delenv(AUTO_ORDER_VARIABLE, raising=False)  # auto as a user has it
    out = run_cli("--budget", "40", "--run-dir", str(tmp_path / "runs"), timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "sandbox docker (auto: a Docker daemon answers" in out.stdout
    assert "Dev evaluations: 40 ok." in out.stdout
    by_status = read(only_run(tmp_path / "runs"), "SELECT status, split, count(*) FROM evaluations GROUP BY ALL")
    assert {status for status, _, _ in by_status} == {"ok"}, by_status
    assert sum(n for _, split, n in by_status if split == "dev") == 40
    workers = read(only_run(tmp_path / "runs"), "SELECT DISTINCT worker FROM evaluations")
    assert workers and all(w.endswith("/docker") for (w,) in workers), workers
