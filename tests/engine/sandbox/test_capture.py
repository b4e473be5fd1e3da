"""engine/sandbox/_capture.py, the docker job's output keeper, run here as the container runs it (`python3 -I -S`),
and docker_output.take_captured, which reads what it wrote. No daemon needed: the docker tests run it in
containers (tests/engine/sandbox/test_docker.py, the hostile suite's floods)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from engine.sandbox.docker_options import CAPTURE_SCRIPT
from engine.sandbox.docker_output import take_captured
from engine.sandbox.output import _Tail

KEEP = 8192


def capture(tmp_path, code: str, keep: int = KEEP, timeout: float = 60) -> subprocess.CompletedProcess:
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    argv = [sys.executable, "-I", "-S", CAPTURE_SCRIPT, str(keep), str(out), "--", sys.executable, "-c", code]
    return subprocess.run(argv, capture_output=True, timeout=timeout)


def tails(tmp_path, keep: int = KEEP) -> tuple[_Tail, _Tail]:
    out, err = _Tail(keep), _Tail(keep)
    assert take_captured(str(tmp_path / "out"), out, err)
    return out, err


FLOOD = """
import sys
block = ("x" * 1023 + "\\n") * 1024
for _ in range(16):
    sys.stdout.write(block)
for _ in range(4):
    sys.stderr.write(block)
sys.stdout.write("FLOOD-END\\n")
sys.stderr.write("FLOOD-END-ERR\\n")
"""


def test_a_flood_keeps_its_last_bytes_and_counts_them_all(tmp_path):
    done = capture(tmp_path, FLOOD)
    assert done.returncode == 0 and done.stdout == b"" and done.stderr == b""  # nothing reaches the daemon's log
    out, err = tails(tmp_path)
    assert out.text().endswith("FLOOD-END\n") and len(out.buf) == KEEP and out.total == 16 * 2**20 + 10
    assert err.text().endswith("FLOOD-END-ERR\n") and err.total == 4 * 2**20 + 14
    assert json.loads((tmp_path / "out" / "state.json").read_text())["complete"] is True


def test_the_exit_code_and_a_signal_come_through_as_the_init_gives_them(tmp_path):
    assert capture(tmp_path, "import sys; print('bye'); sys.exit(3)").returncode == 3
    assert tails(tmp_path)[0].text() == "bye\n"
    killed = capture(tmp_path, "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")
    assert killed.returncode == 128 + signal.SIGSEGV


def test_a_command_that_cannot_start_is_127_with_the_reason(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    argv = [sys.executable, "-I", "-S", CAPTURE_SCRIPT, str(KEEP), str(out), "--", str(tmp_path / "no-such-program")]
    done = subprocess.run(argv, capture_output=True, timeout=60)
    assert done.returncode == 127
    said = f"clade-capture: exec {tmp_path / 'no-such-program'} failed: No such file or directory\n"
    assert done.stderr.decode() == said and tails(tmp_path)[1].text() == said


def test_output_before_a_kill_is_there(tmp_path):
    """Killed at its time limit (the container's SIGKILL), the job leaves what came until a moment before."""
    out = tmp_path / "out"
    out.mkdir()
    code = "import sys, time\nprint('before the kill', flush=True)\ntime.sleep(600)\n"
    argv = [sys.executable, "-I", "-S", CAPTURE_SCRIPT, str(KEEP), str(out), "--", sys.executable, "-c", code]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        waited = 0.0
        while not (out / "state.json").exists():  # the event: the first output flushed (FLUSH_S after it came)
            time.sleep(0.05)
            waited += 0.05
            assert waited < 60, "the capture wrote nothing in 60 s"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    got, _ = tails(tmp_path)
    assert got.text() == "before the kill\n"
    assert json.loads((out / "state.json").read_text())["complete"] is False


def test_what_the_job_put_in_place_of_the_files_is_not_followed(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    secret = tmp_path / "host-secret"
    secret.write_text("do not read")
    (out / "state.json").write_text('{"stdout_total": 5, "stderr_total": 0, "complete": true}')
    (out / "stdout").symlink_to(secret)  # the job writes /clade/out as the same user: a link to a host file
    (out / "stderr").write_bytes(b"")
    a, b = _Tail(KEEP), _Tail(KEEP)
    assert take_captured(str(out), a, b) is False and a.buf == bytearray()
    (out / "stdout").unlink()
    (out / "state.json").write_text(json.dumps({"stdout_total": 3 * KEEP, "stderr_total": 0, "complete": True}))
    (out / "stdout").write_bytes(b"y" * (3 * KEEP))  # more than a tail: only the last bytes are read
    assert take_captured(str(out), a, b) and len(a.buf) == KEEP and a.total == 3 * KEEP


def test_nothing_written_leaves_the_streamed_tails(tmp_path):
    (tmp_path / "out").mkdir()
    a, b = _Tail(KEEP), _Tail(KEEP)
    a.add(b"streamed")
    assert take_captured(str(tmp_path / "out"), a, b) is False and a.text() == "streamed"


def test_a_process_left_holding_the_pipes_does_not_hold_the_job(tmp_path):
    """The fork bomb's case: the command ends and leaves processes that hold its stdout open. The capture
    ends with the command (the container's end takes the rest), with all the command wrote, however much."""
    code = (
        "import subprocess, sys\n"
        "left = subprocess.Popen(['sleep', '600'])\n"  # inherits stdout and stderr
        "print(left.pid, file=sys.stderr)\n"
        "sys.stdout.write('x' * 200000 + '\\nLAST\\n')\n"
    )
    done = capture(tmp_path, code, timeout=300)  # waiting for the sleep would raise TimeoutExpired
    out, err = tails(tmp_path)
    os.kill(int(err.text().split()[0]), signal.SIGKILL)
    assert done.returncode == 0 and out.text().endswith("x\nLAST\n") and out.total == 200006
