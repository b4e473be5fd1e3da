"""`--mutator human` end to end, as a person drives it: first at a pseudo-terminal, then through a pipe.

SEARCH/REPLACE blocks typed at the terminal become a child booked as a call of model `human`, 0 tokens, cost
0; Ctrl-C typed while the second question waits stops the run as interrupted, without a traceback;
`--resume` (its stdin a pipe) asks that same expansion again, and a whole file given without a fence becomes
its child, booked under its key;
a replay of the run rebuilds the same tree from the recorded answers, asking no one, at no cost."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time

import duckdb
import pytest

from engine.front.cli import build_parser
from engine.front.run import run_from_args
from tests.conftest import REPO, small_instances
from tests.engine.test_search_e2e import only_run

DIFF = (
    "Change: best fit.\n\nagent.py\n<<<<<<< SEARCH\n    return np.zeros_like(bins)\n=======\n"
    "    return -(bins - item)\n>>>>>>> REPLACE\n.\n"
)


def whole_file(weight: float) -> str:
    return f"import numpy as np\n\n\ndef priority(item, bins):\n    return -(bins - item) * {weight}\n.\n"


def search(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "engine.search", *args],
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="200"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def rows(run, sql: str) -> list[tuple]:
    with duckdb.connect(str(run / "archive.duckdb"), read_only=True) as con:
        return con.execute(sql).fetchall()


ASKS = re.compile(r"The human mutator asks \(mutate, (parent \d+ child \d+ attempt 0)\)")
AGENT_OF_NODE_2 = (
    "SELECT b.content FROM node_files f JOIN blobs b ON b.hash = f.hash WHERE f.node_id = 2 AND f.path = 'agent.py'"
)
CALLS = "SELECT model, purpose, tokens_in, tokens_out, cost_usd, request->>'key' FROM llm_calls ORDER BY id"


class Terminal:
    """`engine.search` on a pseudo-terminal, as a person at a keyboard runs it: what it prints, what is typed
    (Ctrl-C included, which the terminal turns into SIGINT for its foreground processes)."""

    def __init__(self, *args: str) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the search, with the pseudo-terminal as its controlling terminal
            os.chdir(REPO)
            os.environ.update(PYTHONPATH=str(REPO), COLUMNS="200")
            os.execv(sys.executable, [sys.executable, "-m", "engine.search", *args])
        self.out = b""

    def type(self, text: str) -> None:
        os.write(self.fd, text.encode())

    def _read(self, timeout_s: float) -> bool:
        """Read what is there; False once the command has closed the terminal."""
        ready, _, _ = select.select([self.fd], [], [], timeout_s)
        if ready:
            try:
                self.out += os.read(self.fd, 65536)
            except OSError:  # EIO: the command has exited
                return False
        return True

    def asked(self, times: int, limit_s: float = 60) -> list[str]:
        """The keys of the first `times` questions, once the last is asked."""
        end = time.monotonic() + limit_s
        while len(keys := ASKS.findall(self.text())) < times:
            assert self._read(0.2), self.text()[-3000:]
            assert time.monotonic() < end, f"fewer than {times} questions after {limit_s} s: {self.text()[-3000:]}"
        return keys[:times]

    def wait(self, limit_s: float = 60) -> int:
        end = time.monotonic() + limit_s
        while self._read(0.2):
            assert time.monotonic() < end, self.text()[-3000:]
        _, status = os.waitpid(self.pid, 0)
        os.close(self.fd)
        return os.waitstatus_to_exitcode(status)

    def text(self) -> str:
        return self.out.decode(errors="replace").replace("\r\n", "\n")


@pytest.mark.slow
def test_a_person_answers_at_the_terminal_is_cut_short_resumes_and_is_replayed(tmp_path, capsys):
    instances = small_instances(tmp_path / "instances.json", n_dev=2, n_holdout=1, n_items=30)
    runs = tmp_path / "runs"
    common = ["--budget", "5", "--workers", "1", "--sandbox", "process", "--quiet"]  # the resume, the replay: the same
    first = Terminal("--mutator", "human", "--instances", str(instances), "--run-dir", str(runs), *common)
    answered = first.asked(1)[0]
    first.type(DIFF)  # pasted, ended by a line "."
    waiting = first.asked(2)[1]
    first.type("\x03")  # Ctrl-C while the second question waits
    code = first.wait()
    out = first.text()
    assert code == 130, out[-3000:]
    assert "Traceback" not in out and "--resume" in out and "# Current code (the parent)" in out
    run = only_run(runs)
    assert rows(run, "SELECT status FROM runs") == [("interrupted",)]
    assert rows(run, CALLS) == [("human", "mutate", 0, 0, 0.0, answered)]
    assert rows(run, "SELECT id, status, mutator, model FROM nodes WHERE id > 0") == [(1, "valid", "human", "human")]

    again = search("--resume", str(run), "--quiet")
    out, _ = again.communicate("".join(whole_file(w) for w in (2.0, 3.0, 4.0, 5.0)), timeout=120)
    assert again.returncode == 0, out[-3000:]
    assert ASKS.findall(out)[0] == waiting  # the same expansion, asked again first
    assert rows(run, CALLS)[1] == ("human", "mutate", 0, 0, 0.0, waiting)
    assert rows(run, "SELECT status, mutator, model FROM nodes WHERE id = 2") == [("valid", "human", "human")]
    assert "return -(bins - item) * 2.0" in rows(run, AGENT_OF_NODE_2)[0][0]  # a whole file, without a fence
    assert not (run / "human" / "pending.json").exists()
    tree = rows(run, "SELECT id, parent_id, status, model FROM nodes ORDER BY id")

    replayed = build_parser().parse_args(["--replay", str(run), "--run-dir", str(tmp_path / "replays"), "--quiet"])
    assert run_from_args(replayed) == 0  # in this process: its stdin is pytest's, which no one is asked on
    assert "The human mutator asks" not in capsys.readouterr().out
    replay = only_run(tmp_path / "replays")
    assert rows(replay, "SELECT count(*) FROM llm_calls") == [(0,)]
    assert rows(replay, "SELECT id, parent_id, status, model FROM nodes ORDER BY id") == tree
