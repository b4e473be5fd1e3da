"""Agents that misbehave are timed out, killed or ignored, stored with the right status, and the search goes on."""
from __future__ import annotations

import asyncio
import textwrap
from dataclasses import replace

import pytest

from engine.evaluation import run_agent
from engine.sandbox import make_sandbox
from tasks.base import Instance
from tasks.binpack.task import BinPackTask
from tests.conftest import run_cli
from tests.engine.test_search_e2e import only_run, read

FIRST_FIT = "    return np.zeros_like(bins)\n"

HOSTILE = {
    "loops forever": ("import numpy as np\ndef priority(item, bins):\n    while True:\n        pass\n",
                      {"timeout", "killed"}),
    "sleeps past the timeout": ("import time, numpy as np\ndef priority(item, bins):\n    time.sleep(60)\n",
                                {"timeout"}),
    "allocates without bound": ("import numpy as np\nhog = []\ndef priority(item, bins):\n"
                                "    while True:\n        hog.append(bytearray(50 * 2**20))\n",
                                {"error", "killed"}),
    "forks without bound": ("import os, numpy as np\ndef priority(item, bins):\n    while True:\n"
                            "        try:\n            os.fork()\n        except OSError:\n            pass\n",
                            {"timeout", "killed", "error"}),
    "exits early": ("import os, numpy as np\ndef priority(item, bins):\n    os._exit(0)\n", {"bad_output"}),
    "writes a forged answer and exits": (
        "import os, json, numpy as np\njson.dump([0] * 500, open('answer.json', 'w'))\nos._exit(0)\n"
        "def priority(item, bins):\n    return bins\n", {"bad_output"}),
    "kills itself": ("import os, signal, numpy as np\ndef priority(item, bins):\n"
                     "    os.kill(os.getpid(), signal.SIGKILL)\n", {"killed"}),
    "returns the wrong shape": ("import numpy as np\ndef priority(item, bins):\n    return np.zeros(3)\n",
                                {"error"}),
}


def evaluate(source: str, timeout: float = 3.0):
    task = BinPackTask()
    task.limits = replace(task.limits, timeout_s=timeout, cpu_s=int(timeout) + 1, memory_mb=768)
    instance = next(i for i in task.instances() if i.split == "dev" and i.id.startswith("or"))
    return asyncio.run(run_agent(task, make_sandbox("process"), {"agent.py": source}, instance)), instance


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_agent_is_contained(name):
    source, statuses = HOSTILE[name]
    outcome, _ = evaluate(source)
    assert outcome.status in statuses, (outcome.status, outcome.feedback)
    if outcome.status != "ok":
        assert outcome.metrics == {} and outcome.feedback


def test_a_printed_score_is_only_text():
    source = ("import numpy as np\nprint('score: 1.0\\nbins: 1\\nexcess: 0.0')\n"
              "def priority(item, bins):\n    print('SCORE 1.0')\n" + FIRST_FIT)
    outcome, instance = evaluate(source)
    honest, _ = evaluate("import numpy as np\ndef priority(item, bins):\n" + FIRST_FIT)
    assert outcome.status == "ok" and "score: 1.0" in outcome.stdout_tail
    assert outcome.metrics == honest.metrics  # graded from the packing, which is first fit's


def test_flooding_output_keeps_a_bounded_tail():
    source = "import numpy as np\ndef priority(item, bins):\n    print('x' * 100000)\n" + FIRST_FIT
    outcome, _ = evaluate(source, timeout=20)
    assert outcome.status == "ok"
    assert len(outcome.stdout_tail) <= BinPackTask.limits.output_bytes


def test_a_search_from_a_hanging_agent_goes_on(tmp_path, instances_file):
    agent = tmp_path / "agent.py"
    agent.write_text(textwrap.dedent("""\
        import time
        import numpy as np

        def priority(item, bins):
            print("score: 1.0")
            if item > 95:
                time.sleep(30)
            return np.zeros_like(bins)
    """))
    runs = tmp_path / "runs"
    out = run_cli("--agent", str(agent), "--budget", "10", "--workers", "2", "--timeout", "1.5",
                  "--instances", str(instances_file), "--run-dir", str(runs), "--quiet")
    assert out.returncode == 0, out.stderr + out.stdout
    run = only_run(runs)
    assert read(run, "SELECT count(*) FROM evaluations WHERE split = 'dev'")[0][0] == 10
    # the seed hangs on instances with a big item: stored as timeouts with score 0
    rows = read(run, "SELECT status, score FROM evaluations WHERE node_id = 0 AND split = 'dev'")
    assert any(s == "timeout" for s, _ in rows)
    assert all(score == 0.0 for s, score in rows if s != "ok")
    assert read(run, "SELECT status FROM runs")[0][0] == "finished"
