"""The hostile-agent suite (issue 4): one binpack agent per attack, run against every sandbox backend present.

Each agent is a real `agent.py` (it defines `priority(item, bins)`) that tries
one thing at import or in `priority`, reports what it saw on stdout (`NOTE
...`, or `BREACH ...` when the attempt worked), records nothing outside, and
where sensible then packs like first fit: a contained attempt then yields a
valid first-fit answer, so "the attempt failed and the evaluation is fine" is
told apart from "the attempt succeeded". Paths, ports and pids the agents aim
at are templated into their source by the test.

For every (agent, backend) the evaluation goes through the engine's own
`run_agent` with small limits, and the test checks: the Outcome's status is one
of the attack's expected ones (an Outcome that is not ok has no metrics and a
feedback line; an ok one was graded honestly outside, and equals first fit's
where the agent packs like first fit); no secret (holdout data, API keys)
reached the Outcome; the evaluation stored in a real archive reads back with
its status; nothing outside the sandbox changed (the test's copy of the
repository and the archive byte for byte, the real repository's watched files,
no file with the run's marker in the repository, the home directory or the
host's /tmp, a /tmp canary intact, the test's listening socket accepted
nothing, the engine got no signal); no process of the job survives (every
process of a job carries the run's marker as its name or in its argv) and the
engine has no child left. Then, per backend, a whole search through the CLI
from a hostile seed spends its budget and finishes.

Backends: `process` always; `bwrap` when bubblewrap can create its namespaces;
`docker` when engine/sandbox/docker.py exists and reports a daemon. What
`process` does not hold by design (network, reading or writing files outside
its directory, signals to the engine's processes: docs/guide/sandboxes.md) is skipped
there, saying so; everything runs on the others.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import importlib.util
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from string import Template

import numpy as np
import pytest

from archive.records import EvaluationRecord, NodeRecord
from archive.store import Archive
from engine.loop.evaluation import Outcome, run_agent
from engine.sandbox import SandboxJob, SandboxLimits, SandboxResult
from tasks.binpack.packing import first_fit, pack_online
from tasks.binpack.task import BinPackTask
from tests.conftest import REPO, run_cli, small_instances
from tests.engine.test_search_e2e import only_run, read
from tests.parallel import is_venv

pytestmark = pytest.mark.slow  # 30 attacks on each backend, every one a real sandboxed process

LIMITS = SandboxLimits(timeout_s=3.0, cpu_s=2, memory_mb=512, file_size_mb=8, processes=64, output_bytes=8192)
BACKENDS = ("process", "bwrap", "docker")
# Files of the real repository an agent aims at; any change to them fails the test. (The rest of the
# tree is edited concurrently by people, so only files carrying the run's marker count there.)
WATCHED = (
    "tasks/binpack/task.py",
    "tasks/binpack/runner.py",
    "tasks/binpack/packing.py",
    "engine/loop/evaluation.py",
    "archive/store.py",
)
SKIP_DIRS = {".git", "__pycache__", ".pytest_cache", "runs", ".ruff_cache", "clade.egg-info"}


# ----------------------------------------------------------------------------------------------
# Backends


def _bwrap_sandbox():
    from engine.sandbox.bwrap import BwrapSandbox, bwrap_available

    ok, why = bwrap_available()
    if not ok:
        pytest.skip(f"bwrap unusable here: {why}")
    return BwrapSandbox()


def _docker_sandbox():
    if importlib.util.find_spec("engine.sandbox.docker") is None:
        pytest.skip("no docker backend (engine/sandbox/docker.py absent)")
    mod = importlib.import_module("engine.sandbox.docker")
    probe = getattr(mod, "docker_available", None)
    if probe is None:
        pytest.skip("engine/sandbox/docker.py has no docker_available()")
    got = probe()
    ok, why = got if isinstance(got, tuple) else (bool(got), "")
    if not ok:
        pytest.skip(f"docker unusable here: {why or 'no daemon'}")
    try:
        return mod.DockerSandbox()
    except RuntimeError as exc:  # e.g. the image cannot be built without network
        pytest.skip(str(exc))


_SANDBOXES: dict[str, object] = {}
_UNAVAILABLE: dict[str, str] = {}  # backend -> why it cannot run here (probed once)


@pytest.fixture(scope="module", autouse=True)
def _close_sandboxes():
    yield
    for sandbox in _SANDBOXES.values():
        close = getattr(sandbox, "close", None)
        if close is not None:
            close()
    _SANDBOXES.clear()


def sandbox_for(backend: str):
    """The backend's sandbox, shared by the module's tests; skips, saying why, when it cannot run here."""
    if backend in _UNAVAILABLE:
        pytest.skip(_UNAVAILABLE[backend])
    if backend not in _SANDBOXES:
        try:
            if backend == "process":
                from engine.sandbox.process import ProcessSandbox

                _SANDBOXES[backend] = ProcessSandbox()
            elif backend == "bwrap":
                _SANDBOXES[backend] = _bwrap_sandbox()
            else:
                _SANDBOXES[backend] = _docker_sandbox()
        except pytest.skip.Exception as exc:
            _UNAVAILABLE[backend] = str(exc.msg)
            raise
    return _SANDBOXES[backend]


class Recording:
    """Passes jobs to a backend and keeps what came back, so the answer can be graded again here."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name = inner.name
        self.results: list[SandboxResult] = []

    async def run(self, job: SandboxJob) -> SandboxResult:
        result = await self.inner.run(job)
        self.results.append(result)
        return result


# ----------------------------------------------------------------------------------------------
# The agents

PRELUDE = """\
# hostile agent: $name
import ctypes
import os
import sys

import numpy as np

MARKER = $marker
try:  # PR_SET_NAME: this process, and every one it forks, is named after the run
    ctypes.CDLL(None).prctl(15, MARKER.encode(), 0, 0, 0)
except Exception:
    pass


def note(*words):
    print("NOTE", *words, flush=True)


def breach(*words):
    print("BREACH", *words, flush=True)


def priority(item, bins):
    return np.zeros_like(bins)  # first fit


"""

# A daemon: exec'd (so its argv carries the marker), named after the run, off the job's pipes.
DAEMON = (
    "import ctypes, os, sys, time; ctypes.CDLL(None).prctl(15, sys.argv[1].encode(), 0, 0, 0); "
    "fd = os.open(os.devnull, os.O_RDWR); [os.dup2(fd, k) for k in (0, 1, 2)]; "
    "open('daemon.up', 'w').close(); time.sleep(60)"
)

DAEMONIZE = '''
import time


def daemonize():
    """Double fork, new session, exec a sleeper: the classic daemon that outlives its parent."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv(sys.executable, [sys.executable, "-c", $daemon, MARKER])
        os._exit(0)
    os.wait()
    deadline = time.monotonic() + 2
    while not os.path.exists("daemon.up") and time.monotonic() < deadline:
        time.sleep(0.01)
    note("DAEMON up" if os.path.exists("daemon.up") else "DAEMON never came up")
'''


def try_all(targets: str, action: str, success: str = "breach") -> str:
    """Agent code: for each target, try `action` (an expression of `p`); success is a BREACH, or with
    success="note" only noted, for targets the harness judges by the host's files afterwards."""
    return f"""
for p in {targets}:
    try:
        {action}
    except OSError as exc:
        note("refused", p, type(exc).__name__, exc)
    else:
        {success}("did it:", p)
"""


@dataclass(frozen=True)
class Attack:
    name: str
    source: str  # agent code after PRELUDE, a string.Template over the run's context
    statuses: frozenset[str]
    per_backend: dict[str, frozenset[str]] = field(default_factory=dict)
    process_limit: str | None = None  # what `process` does not hold: the attack is skipped there
    honest: bool = False  # an ok outcome must be exactly first fit's
    check: Callable[[Run], None] | None = None

    def expected(self, backend: str) -> frozenset[str]:
        return self.per_backend.get(backend, self.statuses)


def S(*statuses: str) -> frozenset[str]:
    return frozenset(statuses)


def notes(run: Run) -> str:
    return run.outcome.stdout_tail


def check_fork_bomb(run: Run) -> None:
    line = next(x for x in notes(run).splitlines() if x.startswith("NOTE FORKBOMB"))
    fields = dict(kv.split("=") for kv in line.split()[2:])
    assert fields["refused"] == "True", line  # a fork was refused: the cap held
    assert int(fields["alive"]) <= LIMITS.processes, line


def check_memory(run: Run) -> None:
    if run.outcome.status == "killed":
        # a cgroup memory cap (docker): the OOM killer, said so; or the CPU limit, since touching pages costs
        # CPU time too (system time under memory pressure: a loaded machine killed it at 2 s before the cap)
        assert "memory" in run.outcome.feedback or "CPU time limit" in run.outcome.feedback, run.outcome.feedback
        return
    line = next(x for x in notes(run).splitlines() if x.startswith("NOTE MEMORY"))
    assert int(line.split("held=")[1].split()[0]) <= LIMITS.memory_mb, line


def check_disk(run: Run) -> None:
    if run.outcome.status == "killed":  # writing costs CPU time too
        assert "CPU time limit" in run.outcome.feedback, run.outcome.feedback
    if run.outcome.status == "ok":
        line = next(x for x in notes(run).splitlines() if x.startswith("NOTE DISK"))
        assert int(line.split("biggest=")[1].split()[0]) <= LIMITS.file_size_mb, line


def check_daemon(run: Run) -> None:
    assert "NOTE DAEMON up" in notes(run)  # the daemon did start; the suite's process check saw it go


def check_timeout(run: Run) -> None:
    assert run.outcome.runtime_s < LIMITS.timeout_s + 3


def check_cpu_or_wall(run: Run) -> None:
    assert run.outcome.runtime_s < LIMITS.timeout_s + 3
    if run.outcome.status == "killed":
        assert "CPU time limit" in run.outcome.feedback


FLOOD_MB = (16, 4)  # stdout, stderr
FLOOD_SOURCE = f"""
block = ("x" * 1023 + "\\n") * 1024
for _ in range({FLOOD_MB[0]}):
    sys.stdout.write(block)
for _ in range({FLOOD_MB[1]}):
    sys.stderr.write(block)
sys.stdout.write("FLOOD-END\\n")
sys.stderr.write("FLOOD-END-ERR\\n")
sys.stdout.flush()
sys.stderr.flush()
"""


def check_flood(run: Run) -> None:
    out = run.outcome
    assert len(out.stdout_tail.encode()) <= LIMITS.output_bytes
    assert len(out.stderr_tail.encode()) <= LIMITS.output_bytes
    assert out.stdout_tail.endswith("FLOOD-END\n")
    assert out.stderr_tail.endswith("FLOOD-END-ERR\n")


def check_fake_score(run: Run) -> None:
    assert "score: 1.0" in run.outcome.stdout_tail  # printed, and ignored


def feedback_says(*words: str) -> Callable[[Run], None]:
    def check(run: Run) -> None:
        assert any(w in run.outcome.feedback for w in words), run.outcome.feedback

    return check


def check_kill_supervisor(run: Run) -> None:
    # whatever happened, the sandbox still runs an honest agent right after
    honest = asyncio.run(run_agent(run.task, run.sandbox, {"agent.py": FIRST_FIT_AGENT}, run.instance))
    assert honest.status == "ok", honest


def check_net_outside(run: Run) -> None:
    if run.backend == "bwrap":
        assert "NOTE ifaces ['lo']" in notes(run)


FIRST_FIT_AGENT = "import numpy as np\n\n\ndef priority(item, bins):\n    return np.zeros_like(bins)\n"

ATTACKS = [
    Attack(
        "fork_bomb",
        '''
import time


def alive():
    n = 0
    for pid in os.listdir("/proc"):
        try:
            n += pid.isdigit() and open(f"/proc/{pid}/comm").read().strip() == MARKER
        except OSError:
            pass
    return n


def child(depth):
    """Every process forks three more (down to a depth the test bounds, 364 processes in all,
    in case nothing caps it), retrying when refused; then holds its slot."""
    made = 0
    while made < 3 and depth > 0:
        try:
            pid = os.fork()
        except OSError:
            time.sleep(0.02)
            continue
        if pid == 0:
            depth, made = depth - 1, 0
        else:
            made += 1
    while True:
        time.sleep(60)


made, refused = 0, False
deadline = time.monotonic() + 2
while time.monotonic() < deadline:
    try:
        pid = os.fork()
    except OSError:
        refused = True
        break
    if pid == 0:
        if made < 3:
            child(4)
        os._exit(0)  # past three, the original only probes whether one more fork is allowed
    made += 1
    if made > 3:
        os.waitpid(pid, 0)
        if alive() >= 364:
            break
        time.sleep(0.01)
n = alive()
note(f"FORKBOMB refused={refused} alive={n}")
if not refused:
    breach("the fork bomb was never refused a fork")
''',
        S("ok"),
        honest=True,
        check=check_fork_bomb,
    ),
    Attack(
        "memory_bomb",
        """
hog = []
try:
    while len(hog) < 400:  # 12.8 GB: a bound of the test, in case nothing caps it
        hog.append(np.ones(32 * 2**20 // 8))  # touched, not lazily zero pages
except MemoryError:
    pass
held = 32 * len(hog)
del hog
note(f"MEMORY held={held} MB")
""",
        S("ok", "killed"),
        honest=True,
        check=check_memory,
    ),
    Attack(
        "disk_fill",
        """
import errno

CHUNK = b"\\xa5" * 2**20
written = biggest = k = 0
while written < 256:  # MB in all, 32 times the file limit: a bound of the test (no backend caps the total)
    size = 0
    try:
        with open(f"fill{k}.bin", "wb", buffering=0) as f:
            while written < 256:
                f.write(CHUNK)
                size += 1
                written += 1
    except OSError as exc:
        if exc.errno != errno.EFBIG:
            note("DISK stopped:", exc)
            break
    biggest = max(biggest, size)
    k += 1
note(f"DISK written={written} biggest={biggest} files={k}")
""",
        S("ok", "timeout", "killed"),
        honest=True,
        check=check_disk,
    ),
    Attack(
        "infinite_loop",
        """
def priority(item, bins):
    while True:
        pass
""",
        S("killed", "timeout"),
        check=check_cpu_or_wall,
    ),
    Attack(
        "sleep_past_timeout",
        """
import signal
import time

for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(s, signal.SIG_IGN)


def priority(item, bins):
    time.sleep(60)
""",
        S("timeout"),
        check=check_timeout,
    ),
    Attack(
        "daemon_grandchild",
        DAEMONIZE
        + """
daemonize()
""",
        S("ok"),
        honest=True,
        check=check_daemon,
    ),
    Attack(
        "net_loopback",
        """
import socket

for host in ("127.0.0.1", "localhost"):
    try:
        s = socket.create_connection((host, $port), timeout=1)
        s.sendall(b"hello from the sandbox " + MARKER.encode())
        s.close()
    except OSError as exc:
        note("loopback refused", host, type(exc).__name__, exc)
    else:
        breach("connected to the host's loopback port", $port)
""",
        S("ok"),
        process_limit="network access",
        honest=True,
    ),
    Attack(
        "net_outside",
        """
import socket

for addr in (("1.1.1.1", 80), ("8.8.8.8", 53), ("10.255.255.1", 80)):
    try:
        socket.create_connection(addr, timeout=1).close()
    except OSError as exc:
        note("outside refused", addr, type(exc).__name__, exc)
    else:
        breach("connected to", addr)
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("8.8.8.8", 53))
except OSError as exc:
    note("udp refused", type(exc).__name__, exc)
else:
    breach("sent a datagram outside")
try:
    socket.getaddrinfo("example.com", 80)
except OSError as exc:
    note("dns refused", type(exc).__name__, exc)
else:
    breach("resolved a name")
note("ifaces", sorted(name for _, name in socket.if_nameindex()))
""",
        S("ok"),
        process_limit="network access",
        honest=True,
        check=check_net_outside,
    ),
    Attack(
        "read_holdout",
        """
for p in ($archive, $instances, $holdout):  # the smallest last, so that it stays in the output's tail
    try:
        data = open(p, "rb").read()
    except OSError as exc:
        note("refused", p, type(exc).__name__, exc)
    else:
        print(data.decode(errors="replace"))
        breach("read", p)
""",
        S("ok"),
        process_limit="reading files the engine's user can read (holdout data included)",
        honest=True,
    ),
    Attack(
        "api_key_environ",
        """
import json

env = dict(os.environ)
print(json.dumps(env))
print(json.dumps(env), file=sys.stderr)
for p in ("/proc/self/environ", f"/proc/{os.getppid()}/environ"):
    try:
        print(open(p, "rb").read().decode(errors="replace"))
    except OSError as exc:
        note("refused", p, exc)
if any("API_KEY" in k for k in env):
    breach("found an API key in the environment")
""",
        S("ok"),
        honest=True,
    ),
    Attack(
        "api_key_proc",
        """
found = []
for pid in [p for p in os.listdir("/proc") if p.isdigit()] + [str($decoy_pid), str($engine_pid)]:
    try:
        env = open(f"/proc/{pid}/environ", "rb").read().decode(errors="replace")
    except OSError:
        continue
    found += [kv for kv in env.split("\\0") if "API_KEY" in kv]
if found:
    print(found)
    breach("read API keys from another process's environment")
else:
    note("no API key in any visible /proc/*/environ")
""",
        S("ok"),
        process_limit="reading files the engine's user can read (the engine's /proc/<pid>/environ)",
        honest=True,
    ),
    Attack(
        "write_home",
        try_all("($home + '/' + MARKER + '.txt', $home + '/.' + MARKER)", "open(p, 'w').write('escaped')"),
        S("ok"),
        process_limit="writing outside the working directory (home)",
        honest=True,
    ),
    Attack(
        "write_host_tmp",
        """
for p in ("/tmp/" + MARKER + ".txt", "/var/tmp/" + MARKER + ".txt"):
    try:
        open(p, "w").write("escaped")
        note("wrote", p, "(a private /tmp is fine; the test looks at the host's)")
    except OSError as exc:
        note("refused", p, exc)
try:
    before = open($tmp_canary).read()
except OSError as exc:
    note("canary not visible", exc)
else:
    breach("the host's /tmp canary is visible:", before)
try:
    open($tmp_canary, "a").write("overwritten by the agent")
except OSError as exc:
    note("canary refused", exc)
""",
        S("ok"),
        process_limit="writing outside the working directory (host /tmp)",
        honest=True,
    ),
    Attack(
        "write_repository",
        try_all(
            "($fake_repo + '/' + MARKER + '.txt', $fake_repo + '/canary.txt')",
            "open(p, 'a').write('escaped ' + MARKER)",
        )
        + try_all(
            # The real checkout may be visible as the parent of a bound Python prefix (a venv inside it):
            # a write there can land in the sandbox's own /tmp, so the harness judges by the host's files.
            "($real_repo + '/' + MARKER + '.txt', $real_repo + '/tasks/binpack/' + MARKER + '.py')",
            "open(p, 'a').write('escaped ' + MARKER)",
            success="note",
        ),
        S("ok"),
        process_limit="writing outside the working directory (the repository)",
        honest=True,
    ),
    Attack(
        "write_archive",
        """
for p in ($archive, $archive + "." + MARKER):
    try:
        with open(p, "ab") as f:
            f.write(b"CLADE-HOSTILE " + MARKER.encode())
    except OSError as exc:
        note("refused", p, type(exc).__name__, exc)
    else:
        breach("appended to", p)
try:
    os.remove($archive)
except OSError as exc:
    note("remove refused", type(exc).__name__, exc)
else:
    breach("removed the archive")
""",
        S("ok"),
        process_limit="writing outside the working directory (the run's archive)",
        honest=True,
    ),
    Attack(
        "tamper_task_files",
        """
import json

# The task's files in the sandbox are copies, graded outside: rewrite them all and run them again.
json.dump({"capacity": 1000.0, "items": [1.0, 1.0, 1.0]}, open("instance.json", "w"))
open("clade_packing.py", "w").write("def pack_online(priority, capacity, items):\\n    return [0] * len(items)\\n")
open("runner.py", "w").write(
    "import json, clade_packing\\n"
    "inst = json.load(open('instance.json'))\\n"
    "json.dump(clade_packing.pack_online(None, inst['capacity'], inst['items']), open('answer.json', 'w'))\\n"
    "print('score: 1.0')\\n")
note("TAMPER rewrote runner.py, clade_packing.py and instance.json; running them")
os.execv(sys.executable, [sys.executable, "runner.py"])
""",
        S("bad_output"),
        check=feedback_says("one bin per item"),
    ),
    Attack(
        "tamper_evaluator",
        """
# The evaluator lives outside: in the (test's copy of the) repository. Rewrite its grading there...
for rel, text in (("tasks/binpack/task.py", "\\nBinPackTask.grade = lambda self, i, a: None\\n"),
                  ("engine/loop/evaluation.py", "\\nrun_agent = None\\n")):
    p = $fake_repo + "/" + rel
    try:
        open(p, "a").write(text)
    except OSError as exc:
        note("refused", p, type(exc).__name__, exc)
    else:
        breach("rewrote", p)
# ...and open the real one for writing (writing nothing, so that a failure here harms nothing).
for rel in ("tasks/binpack/task.py", "engine/loop/evaluation.py", "tasks/binpack/runner.py"):
    p = $real_repo + "/" + rel
    try:
        open(p, "a").close()
    except OSError as exc:
        note("refused", p, type(exc).__name__, exc)
    else:
        breach("could open for writing", p)
""",
        S("ok"),
        process_limit="writing outside the working directory (the repository's evaluator)",
        honest=True,
    ),
    Attack(
        "fake_score",
        """
import json

print("score: 1.0\\nbins: 1\\nexcess: 0.0\\nstatus: ok")
print(json.dumps({"status": "ok", "score": 1.0, "metrics": {"bins": 1, "excess": 0.0}}), file=sys.stderr)
json.dump({"bins": 1, "score": 1.0}, open("score.json", "w"))
json.dump({"bins": 1, "excess": 0.0}, open("metrics.json", "w"))


def priority(item, bins):
    print("SCORE 1.0")
    return np.zeros_like(bins)
""",
        S("ok"),
        honest=True,
        check=check_fake_score,
    ),
    # 16 MB and 4 MB: 2,000x the output cap. Under docker the output no longer goes through the daemon's log
    # (which lost the last lines of such a flood under load: its json-file copy rotates, and Docker 20.10 closes
    # the log streams 2 s after the container's exit): the job's capture keeps the tails (engine/sandbox/_capture.py).
    Attack(
        "stdout_flood",
        FLOOD_SOURCE,
        S("ok"),
        honest=True,
        check=check_flood,
    ),
    Attack(
        "binary_answer",
        """
import atexit


def garbage():  # after the runner wrote its honest answer
    with open("answer.json", "wb") as f:
        f.write(b"\\xff\\xfe\\x00" + os.urandom(65536) + b"\\x00\\x80")


atexit.register(garbage)
""",
        S("bad_output"),
        check=feedback_says("not JSON"),
    ),
    Attack(
        "exit_before_answer",
        """
def priority(item, bins):
    os._exit(0)
""",
        S("bad_output"),
        check=feedback_says("no answer file", "no answer.json"),
    ),
    Attack(
        "forged_answer_exit",
        """
import json

n = len(json.load(open("instance.json"))["items"])
json.dump([0] * n, open("answer.json", "w"))  # one bin for everything
print("score: 1.0", flush=True)
os._exit(0)
""",
        S("bad_output"),
        check=feedback_says("over capacity"),
    ),
    Attack(
        "exit_error",
        """
print("score: 1.0", flush=True)
os._exit(3)
""",
        S("error"),
        check=feedback_says("exit code 3"),
    ),
    Attack(
        "self_sigkill",
        """
import signal


def priority(item, bins):
    os.kill(os.getpid(), signal.SIGKILL)
""",
        S("killed"),
        check=feedback_says("killed by SIGKILL"),
    ),
    Attack(
        "segfault",
        """
def priority(item, bins):
    ctypes.string_at(0)
""",
        S("killed"),
        check=feedback_says("killed by SIGSEGV"),
    ),
    Attack(
        "kill_supervisor",
        """
import signal
import time

parent = os.getppid()
try:
    os.kill(parent, signal.SIGKILL)
    note("sent SIGKILL to the parent", parent)
except OSError as exc:
    note("refused", exc)
time.sleep(0.3)
""",
        S("ok", "killed"),
        per_backend={"process": S("killed", "error"), "docker": S("ok", "killed", "error")},
        honest=True,
        check=check_kill_supervisor,
    ),
    Attack(
        "signal_engine",
        """
import signal

for pid, sig in (($engine_pid, signal.SIGUSR1), ($decoy_pid, signal.SIGTERM)):
    try:
        os.kill(pid, sig)
    except OSError as exc:
        note("refused", pid, type(exc).__name__, exc)
    else:
        breach("signalled", pid)
""",
        S("ok"),
        process_limit="signals to the engine's processes (the job runs as the engine's user)",
        honest=True,
    ),
    Attack(
        "monkeypatch_builtins",
        """
import builtins
import json

import clade_packing

real_len, real_dump = builtins.len, json.dump
builtins.len = lambda obj: 1 if isinstance(obj, list) and real_len(obj) > 100 else real_len(obj)
json.dump = lambda obj, fp, **kw: real_dump([0] * real_len(obj), fp)  # everything in bin 0
clade_packing.pack_online = lambda priority, capacity, items: np.zeros(real_len(items), dtype=np.int64)
clade_packing.lower_bound = lambda capacity, items: 1
np.count_nonzero = lambda *a, **k: 1
np.bincount = lambda *a, **k: np.zeros(1)
print("score: 1.0", flush=True)
""",
        S("bad_output"),
        check=feedback_says("over capacity"),
    ),
    Attack(
        "import_engine_archive",
        """
sys.path[:0] = [$real_repo, $fake_repo]
try:
    from archive.records import EvaluationRecord
    from archive.store import Archive

    a = Archive.open($archive)
    a.add_evaluation(EvaluationRecord(0, "forged", "dev", 7, 1.0, {"bins": 1}, "ok"))
    a.close()
except Exception as exc:
    note("engine write refused", type(exc).__name__, exc)
else:
    breach("wrote a forged evaluation through the engine's archive")
try:
    import duckdb

    con = duckdb.connect($archive)
    con.execute("INSERT INTO events VALUES (999999, now(), 'forged', NULL, NULL)")
    con.close()
except Exception as exc:
    note("duckdb write refused", type(exc).__name__, exc)
else:
    breach("wrote the archive with duckdb")
""",
        S("ok"),
        process_limit="writing outside the working directory (importing the engine to write the archive)",
        honest=True,
    ),
    Attack(
        "wrong_shape",
        """
def priority(item, bins):
    return np.zeros(3)
""",
        S("error"),
        check=feedback_says("shape"),
    ),
]
ATTACK = {a.name: a for a in ATTACKS}
assert len(ATTACK) == len(ATTACKS)


# ----------------------------------------------------------------------------------------------
# The world the agents aim at


@dataclass
class World:
    root: Path
    task: BinPackTask
    instance: object
    instances: Path
    holdout: Path
    holdout_token: str
    fake_repo: Path
    archive: Path
    first_fit_metrics: dict
    node_ids: itertools.count


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> World:
    root = tmp_path_factory.mktemp("hostile")
    token = f"holdout-{uuid.uuid4().hex}"
    instances = small_instances(root / "instances.json", n_dev=1, n_holdout=1)
    data = json.loads(instances.read_text())
    data[token] = data.pop("holdout0")  # the holdout instance's name is the secret
    instances.write_text(json.dumps(data))
    holdout = root / "holdout.json"
    holdout.write_text(json.dumps({token: data[token]}))
    task = BinPackTask(instances_path=str(instances))
    task.limits = LIMITS
    instance = next(i for i in task.instances() if i.split == "dev")
    items = instance.data["items"]
    ff = pack_online(first_fit, instance.data["capacity"], np.asarray(items, dtype=float))
    ff_metrics = task.grade(instance, json.dumps(ff.tolist()).encode()).metrics

    fake_repo = root / "repo"
    ignore = shutil.ignore_patterns(*SKIP_DIRS)
    for sub in ("engine", "tasks", "archive"):
        shutil.copytree(REPO / sub, fake_repo / sub, ignore=ignore)
    (fake_repo / "canary.txt").write_text("the repository's canary\n")

    archive = root / "run" / "archive.duckdb"
    with Archive.create(archive, "hostile", {"suite": "hostile"}, seed=0) as a:
        a.add_instances([(i.id, i.split, i.data) for i in task.instances()])
        a.add_node(NodeRecord(0, None, 0, "valid", "seed"), {"agent.py": FIRST_FIT_AGENT})
    return World(root, task, instance, instances, holdout, token, fake_repo, archive, ff_metrics, itertools.count(1))


# ----------------------------------------------------------------------------------------------
# Snapshots of what is outside the sandbox


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tree(root: Path, hashed: Collection[str] | None = None) -> dict[str, str]:
    """relative path -> sha256 of every regular file under root (caches, run folders and virtual environments
    left out); with `hashed`, only those paths are read (the others map to ''): what a check of the checkout
    compares, whatever a user keeps beside the code."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not is_venv(Path(dirpath, d))]
        for name in filenames:
            p = Path(dirpath, name)
            if p.is_file() and not p.is_symlink():
                rel = str(p.relative_to(root))
                try:
                    out[rel] = sha256(p) if hashed is None or rel in hashed else ""
                except OSError:
                    pass  # removed meanwhile by someone else's work
    return out


def listing(directory: Path) -> set[str]:
    try:
        return set(os.listdir(directory))
    except OSError:
        return set()


def archive_files(archive: Path) -> dict[str, str]:
    return {p.name: sha256(p) for p in sorted(archive.parent.iterdir()) if p.is_file()}


def marked_processes(marker: str) -> list[tuple[int, str]]:
    """(pid, state) of every process named after the run or carrying its marker in argv; zombies too."""
    token = marker.encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            comm = Path(f"/proc/{name}/comm").read_bytes().strip()
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if comm == token or token in cmdline:
            found.append((int(name), state))
    return found


def wait_until_gone(marker: str, timeout: float = 30.0) -> list[tuple[int, str]]:  # returns once they are gone
    end = time.monotonic() + timeout
    while (left := marked_processes(marker)) and time.monotonic() < end:
        time.sleep(0.05)
    return left


def my_children() -> set[int]:
    """This process's children, but for a sandbox's long-lived supervisor server (`_supervisor.py --serve`)."""
    kids: set[int] = set()
    for tid in os.listdir("/proc/self/task"):
        try:
            kids.update(int(x) for x in Path(f"/proc/self/task/{tid}/children").read_text().split())
        except OSError:
            pass
    servers = set()
    for pid in kids:
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"--serve" in argv and any(a.endswith(b"_supervisor.py") for a in argv):
            servers.add(pid)
    return kids - servers


def stale_workdirs() -> list[str]:
    """The process-family sandboxes' working directories of this engine (this pytest) left in /tmp."""
    prefix = f"clade-sbx-{os.getpid()}-"
    return [n for n in listing(Path(tempfile.gettempdir())) if n.startswith(prefix)]


# ----------------------------------------------------------------------------------------------
# One run


@dataclass
class Run:
    attack: Attack
    backend: str
    task: BinPackTask
    instance: object
    sandbox: object
    outcome: Outcome
    result: SandboxResult | None


def independent_bins(answer: bytes, instance) -> int | None:
    """Bins used by a valid answer, None if it is not one: the grading redone without the task's code."""
    try:
        chosen = json.loads(answer)
    except (ValueError, UnicodeDecodeError):
        return None
    items = instance.data["items"]
    if not isinstance(chosen, list) or len(chosen) != len(items):
        return None
    if not all(type(b) is int and 0 <= b < len(items) for b in chosen):
        return None
    loads: dict[int, float] = {}
    for b, x in zip(chosen, items):
        loads[b] = loads.get(b, 0.0) + float(x)
    if any(v > float(instance.data["capacity"]) + 1e-9 for v in loads.values()):
        return None
    return len(loads)


@pytest.fixture
def usr1():
    got: list[int] = []
    old = signal.signal(signal.SIGUSR1, lambda signum, frame: got.append(signum))
    yield got
    signal.signal(signal.SIGUSR1, old)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", [a.name for a in ATTACKS])
def test_hostile_agent(name: str, backend: str, world: World, monkeypatch, usr1) -> None:
    attack = ATTACK[name]
    if attack.name == "fork_bomb":
        from engine.sandbox.cgroup import PidsCgroups

        if os.geteuid() == 0 and not PidsCgroups().available:
            pytest.skip("no pids cgroup: an uncapped fork bomb as root is not safe to run")
    if backend == "process" and attack.process_limit:
        pytest.skip(f"process backend does not hold {attack.process_limit}: a documented limit (guide: Sandboxes)")
    sandbox = Recording(sandbox_for(backend))

    marker = "hx" + uuid.uuid4().hex[:13]  # 15 characters: fits a process name
    keys = {"OPENAI_API_KEY": f"sk-hostile-{uuid.uuid4().hex}", "ANTHROPIC_API_KEY": f"sk-ant-{uuid.uuid4().hex}"}
    for k, v in keys.items():
        monkeypatch.setenv(k, v)
    secrets = [world.holdout_token, *keys.values()]
    home = Path(os.path.expanduser("~"))
    tmp = Path(tempfile.gettempdir())
    tmp_canary = tmp / f"clade-hostile-canary-{marker}"
    tmp_canary.write_text(f"canary {marker}\n")
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    decoy = subprocess.Popen(["sleep", "60"], env={"PATH": os.environ.get("PATH", os.defpath), **keys})
    try:
        context = {
            "name": attack.name,
            "marker": repr(marker),
            "daemon": repr(DAEMON),
            "port": str(listener.getsockname()[1]),
            "holdout": repr(str(world.holdout)),
            "instances": repr(str(world.instances)),
            "archive": repr(str(world.archive)),
            "fake_repo": repr(str(world.fake_repo)),
            "real_repo": repr(str(REPO)),
            "home": repr(str(home)),
            "tmp_canary": repr(str(tmp_canary)),
            "engine_pid": str(os.getpid()),
            "decoy_pid": str(decoy.pid),
        }
        source = Template(PRELUDE + textwrap.dedent(attack.source)).substitute(context)
        compile(source, "agent.py", "exec")

        before_repo, before_fake = tree(REPO, WATCHED), tree(world.fake_repo)
        before_archive, before_tmp = archive_files(world.archive), listing(tmp)
        before_home, before_children = listing(home), my_children()

        outcome = asyncio.run(run_agent(world.task, sandbox, {"agent.py": source}, world.instance))
        result = sandbox.results[0] if sandbox.results else None
        run = Run(attack, backend, world.task, world.instance, sandbox, outcome, result)

        # -- nothing of the job lives on; the engine has no child left
        assert wait_until_gone(marker) == [], "a process of the job survived it"
        end = time.monotonic() + 30  # a guard: the loop ends as soon as they are reaped
        while (my_children() - before_children) and time.monotonic() < end:
            time.sleep(0.02)
        assert my_children() - before_children == set(), "the engine has a child left"
        assert stale_workdirs() == []

        # -- the evaluation: the right status, graded outside, honestly
        assert outcome.status in attack.expected(backend), (
            outcome.status,
            outcome.feedback,
            outcome.stdout_tail[-2000:],
        )
        if outcome.status != "ok":
            assert outcome.metrics == {} and outcome.feedback.strip()
        if result is not None and result.status == "ok" and result.answer is not None:
            bins = independent_bins(result.answer, world.instance)
            assert (outcome.status == "ok") == (bins is not None), (outcome.status, outcome.feedback)
            if bins is not None:
                assert outcome.metrics["bins"] == bins
        if attack.honest and outcome.status == "ok":
            assert outcome.metrics == world.first_fit_metrics
        texts = (outcome.stdout_tail, outcome.stderr_tail, outcome.feedback)
        assert not any("BREACH" in t for t in texts), outcome.stdout_tail[-2000:]
        for secret in secrets:
            assert not any(secret in t for t in texts), "a secret reached the evaluation's output"

        # -- nothing outside the sandbox changed
        assert archive_files(world.archive) == before_archive
        assert tree(world.fake_repo) == before_fake
        after_repo = tree(REPO, WATCHED)
        changed = {p for p in before_repo.keys() | after_repo.keys() if before_repo.get(p) != after_repo.get(p)}
        assert {p for p in changed if marker in p or p in WATCHED} == set()
        assert [n for n in listing(tmp) - before_tmp if marker in n] == []
        assert tmp_canary.read_text() == f"canary {marker}\n"
        assert [n for n in listing(home) - before_home if marker in n] == []
        with pytest.raises(BlockingIOError):
            listener.accept()  # no connection reached the test's port
        assert usr1 == [], "the engine was signalled"
        assert decoy.poll() is None, "the engine's other process was signalled"

        if attack.check is not None:
            attack.check(run)

        # -- stored in a real archive, and read back with its status
        node = next(world.node_ids)
        score = 0.0 if outcome.status != "ok" else world.task.score(world.instance, outcome.metrics, None)
        with Archive.open(world.archive) as a:
            a.add_node(
                NodeRecord(node, 0, 1, "valid", "hostile", description=f"{name} on {backend}"), {"agent.py": source}
            )
            a.add_evaluation(
                EvaluationRecord(
                    node_id=node,
                    instance_id=world.instance.id,
                    split="dev",
                    repeat=0,
                    score=score,
                    metrics=outcome.metrics,
                    status=outcome.status,
                    runtime_s=outcome.runtime_s,
                    stdout_tail=outcome.stdout_tail,
                    stderr_tail=outcome.stderr_tail,
                    feedback=outcome.feedback,
                    worker=backend,
                    started_at=outcome.started_at,
                    finished_at=outcome.finished_at,
                )
            )
            ((status, stored_score, stored),) = a.query(
                "SELECT status, score, stdout_tail || stderr_tail || feedback FROM evaluations WHERE node_id = ?",
                [node],
            )
        assert status == outcome.status
        assert stored_score == score and (status == "ok" or score == 0.0)
        assert not any(secret in stored for secret in secrets)
    finally:
        listener.close()
        decoy.kill()
        decoy.wait()
        for p in (
            tmp_canary,
            tmp / f"{marker}.txt",
            home / f"{marker}.txt",
            home / f".{marker}",
            REPO / f"{marker}.txt",
            REPO / "tasks" / "binpack" / f"{marker}.py",
        ):
            if p.exists():
                p.unlink()
        for pid, _ in marked_processes(marker):  # only after a failure: never leave a bomb behind
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


@pytest.mark.parametrize("backend", BACKENDS)
def test_four_floods_at_once_beside_a_search_keep_their_ends(backend: str, world: World, tmp_path) -> None:
    """The flood's end arrives under load: four at once on one sandbox while a search runs on the same backend."""
    sandbox = sandbox_for(backend)
    marker = "hf" + uuid.uuid4().hex[:13]
    source = Template(PRELUDE + textwrap.dedent(FLOOD_SOURCE)).substitute(name="four_floods", marker=repr(marker))
    instances = small_instances(tmp_path / "instances.json")
    search = subprocess.Popen(
        [sys.executable, "-m", "engine.search", "--budget", "40", "--sandbox", backend, "--instances", str(instances),
         "--run-dir", str(tmp_path / "runs"), "--quiet"],
        cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(REPO)), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip

    async def floods() -> list[Outcome]:
        jobs = (run_agent(world.task, sandbox, {"agent.py": source}, world.instance) for _ in range(4))
        return list(await asyncio.gather(*jobs))

    try:
        outcomes = asyncio.run(floods())
    finally:
        out, err = search.communicate(timeout=600)
    assert search.returncode == 0, err[-2000:]
    for outcome in outcomes:
        assert outcome.status == "ok", (outcome.feedback, outcome.stderr_tail[-500:])
        assert outcome.stdout_tail.endswith("FLOOD-END\n") and outcome.stderr_tail.endswith("FLOOD-END-ERR\n")
        assert len(outcome.stdout_tail.encode()) <= LIMITS.output_bytes
    assert wait_until_gone(marker) == []


def test_the_suite_covers_the_issue() -> None:
    """At least one agent per item of issue 4's list (the names say which)."""
    assert len(ATTACKS) >= 17
    wanted = {
        "fork_bomb",
        "memory_bomb",
        "disk_fill",
        "infinite_loop",
        "sleep_past_timeout",
        "daemon_grandchild",
        "net_loopback",
        "net_outside",
        "read_holdout",
        "api_key_environ",
        "write_home",
        "write_host_tmp",
        "write_repository",
        "write_archive",
        "tamper_task_files",
        "tamper_evaluator",
        "fake_score",
        "stdout_flood",
        "binary_answer",
        "exit_before_answer",
        "self_sigkill",
        "segfault",
        "monkeypatch_builtins",
        "import_engine_archive",
    }
    assert wanted <= set(ATTACK)


# ----------------------------------------------------------------------------------------------
# The search goes on

SEARCH_SEED = '''\
"""A seed that leaves a daemon behind and then kills itself, on every instance.

The attack sits in a function called on import: the engine's static check of an
agent (no module-level loops) is hygiene, not a barrier.
"""
import ctypes
import os
import signal
import sys
import time

import numpy as np

MARKER = $marker


def attack():
    ctypes.CDLL(None).prctl(15, MARKER.encode(), 0, 0, 0)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv(sys.executable, [sys.executable, "-c", $daemon, MARKER])
        os._exit(0)
    os.wait()
    deadline = time.monotonic() + 2
    while not os.path.exists("daemon.up") and time.monotonic() < deadline:
        time.sleep(0.01)
    print("score: 1.0", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)


attack()


def priority(item, bins):
    return np.zeros_like(bins)
'''


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_search_from_a_hostile_seed_stops_contained(backend: str, tmp_path: Path, instances_file: Path) -> None:
    """A seed killed on every instance of its first stage stops the search in one line (nothing can be
    measured against it), and nothing it started outlives the run."""
    sandbox_for(backend)  # skips when the backend is absent here
    marker = "hx" + uuid.uuid4().hex[:13]
    agent = tmp_path / "agent.py"
    agent.write_text(Template(SEARCH_SEED).substitute(marker=repr(marker), daemon=repr(DAEMON)))
    runs = tmp_path / "runs"
    tmp = Path(tempfile.gettempdir())
    before_tmp, before_repo = listing(tmp), tree(REPO, WATCHED)
    out = run_cli(
        "--agent",
        str(agent),
        "--budget",
        "6",
        "--instances",
        str(instances_file),
        "--run-dir",
        str(runs),
        "--quiet",
        "--sandbox",
        backend,
        "--timeout",
        "3",
        "--workers",
        "2",
        timeout=120,
    )
    assert out.returncode == 2, out.stderr + out.stdout
    assert "the seed (node 0) failed" in out.stderr and "killed" in out.stderr and "Traceback" not in out.stderr
    assert wait_until_gone(marker) == [], "a daemon of the search survived it"
    run = only_run(runs)
    assert read(run, "SELECT status FROM runs")[0][0] == "interrupted"
    seed = read(run, "SELECT status, score, metrics FROM evaluations WHERE node_id = 0 AND split = 'dev'")
    assert 1 <= len(seed) <= 2  # its first stage (1 of 4) and what was in flight beside it
    assert all(s == "killed" and score == 0.0 and json.loads(m) == {} for s, score, m in seed)
    assert read(run, "SELECT count(*) FROM nodes")[0][0] == 1  # no expansion
    # nothing left in the host's /tmp by the run's sandboxes, nothing of the run in the repository
    leftovers = [
        n
        for n in listing(tmp) - before_tmp
        if marker in n or (n.startswith("clade-sbx-") and not Path("/proc", n.split("-")[2]).exists())
    ]
    assert leftovers == []
    after_repo = tree(REPO, WATCHED)
    changed = {p for p in before_repo.keys() | after_repo.keys() if before_repo.get(p) != after_repo.get(p)}
    assert {p for p in changed if marker in p or p in WATCHED} == set()
