"""Hostile C++ candidates in a ShinkaEvolve folder are contained under bwrap as Python agents are (issue 17).

Each candidate is a complete C++ program the folder's evaluate.py builds with g++ and runs inside the
sandbox: it tries one thing (reach the network, write a marker file into the host's /tmp and the
repository, fork without end), prints what it saw on stderr, then answers like the seed, so a contained
attempt leaves an ok evaluation. Checked: the evaluation ends (no hang), nothing reached the outside, and
the job's processes are gone."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import uuid

import pytest

pytest.importorskip("tree_sitter", reason="tree-sitter is not installed (the languages extra)")
if shutil.which("g++") is None:
    pytest.skip("g++ is not installed (Debian: g++)", allow_module_level=True)

from engine.loop.evaluation import run_agent
from engine.sandbox.bwrap import BwrapSandbox, bwrap_available
from tasks.adapters import make_adapted_task
from tests.conftest import REPO

OK, WHY = bwrap_available()
pytestmark = [pytest.mark.bwrap, pytest.mark.skipif(not OK, reason=WHY)]
FOLDER = REPO / "tests" / "fixtures" / "tasks" / "shinka_cpp"

PROLOGUE = """#include <iostream>
#include <cstdio>
#include <cstring>
#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

// EVOLVE-BLOCK-START
double estimate(double x) {
    return 0.1 * x + 3.0;
}
// EVOLVE-BLOCK-END

"""
ATTACKS = {
    "network": """static void attack() {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{}; a.sin_family = AF_INET; a.sin_port = htons(PORT); inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    int r = s < 0 ? -1 : connect(s, (sockaddr*)&a, sizeof a);
    std::cerr << (r == 0 ? "BREACH connected" : "NOTE no connection") << "\\n";
}
""",
    "write outside": """static void attack() {
    const char* paths[] = {"/tmp/MARKER", "REPO/MARKER"};
    for (const char* p : paths) {
        FILE* f = std::fopen(p, "w");
        if (f) { std::fputs("x", f); std::fclose(f); }
        std::cerr << (f ? "NOTE wrote (inside the sandbox) " : "NOTE refused ") << p << "\\n";
    }
}
""",
    "fork bomb": """static void attack() {
    int made = 0;
    for (int i = 0; i < 100000; ++i) { pid_t p = fork(); if (p == 0) { pause(); _exit(0); } if (p < 0) break; ++made; }
    std::cerr << "NOTE forked " << made << "\\n";
}
""",
}
MAIN = """
int main() {
    attack();
    double x;
    while (std::cin >> x) std::cout << estimate(x) << "\\n";
    return 0;
}
"""


@pytest.mark.slow
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_hostile_cpp_candidate_is_contained(attack, tmp_path):
    marker = f"clade-hostile-cpp-{uuid.uuid4().hex[:8]}"
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.setblocking(False)
    code = (
        ATTACKS[attack]
        .replace("PORT", str(listener.getsockname()[1]))
        .replace("MARKER", marker)
        .replace("REPO", str(REPO))
    )
    task = make_adapted_task(FOLDER)
    files = {"initial.cpp": PROLOGUE + code + MAIN}
    instance = task.instances()[0]
    outcome = asyncio.run(asyncio.wait_for(run_agent(task, BwrapSandbox(), files, instance), 120))
    assert outcome.status in ("ok", "error", "timeout", "killed", "bad_output", "failed_in_evaluator"), outcome
    assert "BREACH" not in outcome.stderr_tail + outcome.stdout_tail
    assert not os.path.exists(f"/tmp/{marker}") and not (REPO / marker).exists()
    with pytest.raises(BlockingIOError):
        listener.accept()  # nobody came through
    listener.close()
    survivors = [
        pid
        for pid in os.listdir("/proc")
        if pid.isdigit() and _cmd(pid).startswith(str(os.getcwd())) and "program" in _cmd(pid)
    ]
    assert not survivors
    if attack != "fork bomb":  # contained, the program still answers: an ok evaluation, scored as the seed
        assert outcome.status == "ok", outcome
        assert abs(outcome.metrics["metric"] - 0.3817) < 0.001  # the seed line's combined_score


def _cmd(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""
