"""scripts/check_wheel.py, all of it: the wheel built, installed alone in a fresh venv, and run as a user runs it.

The tasks whose agents call a model (HumanEval, RepoFix, Polyglot) run against an OpenAI-compatible server on
loopback, through the installed litellm: each answer ends the agent at once (the coding agents' `finish`
action, a function for HumanEval's), so every such evaluation runs the agent, the gateway and the grading for
real and scores what an agent that changes nothing scores.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from importlib.util import find_spec

import pytest

from tests.conftest import REPO
from tests.engine.llm.openai_stub import Answer, OpenAIStub
from tests.tasks.polyglot_support import HAVE, polyglot_env

ANSWER = (
    "Nothing to change.\n"
    '```json\n{"tool": "finish", "summary": "nothing changed"}\n```\n'
    "```python\ndef solve(*args):\n    return None\n```\n"
)
STEPS = ("build", "contents", "twine", "venv", "quickstart", "tasks", "new-task", "runs", "sweep", "module", "api",
         "extras", "notebook")  # fmt: skip
ALWAYS_RUN = {"binpack", "circle_packing", "humaneval", "arc", "repofix", "email_validation"}
# files a run opens that are not Python, one per kind of data
DATA = (
    "agents_seed/binpack_cpp/agent.cpp",
    "tasks/email_validation/data/adversarial.json",
    "tasks/repofix/instances/rf01/solution/textstats/core.py",
    "clade/templates/shinka/evaluate.py",
    "engine/sandbox/docker_image/Dockerfile",
    "engine/report/report.css",
    "tasks/polyglot/javascript/package-lock.json",
)


@pytest.mark.slow
@pytest.mark.skipif(find_spec("build") is None or find_spec("twine") is None, reason="needs build and twine (dev)")
def test_the_wheel_alone_runs_what_a_new_user_runs(tmp_path):
    work = tmp_path / "check"
    with OpenAIStub(lambda body, n: Answer(ANSWER)) as stub:
        argv = [sys.executable, "scripts/check_wheel.py", "--keep", str(work), "--api-base", stub.url]
        env = polyglot_env() if HAVE else None  # the exercises of the shared copy, as .ci/run gives them
        done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=3000)
        asked = len(stub.chat_requests())
    out = done.stdout
    assert done.returncode == 0, out[-4000:] + done.stderr[-2000:]
    for step in STEPS:
        assert re.search(rf"^ok   {re.escape(step)}  ", out, re.MULTILINE), f"step {step} did not pass:\n{out}"
    assert out.strip().splitlines()[-1] == f"wheel check: {len(STEPS)} of {len(STEPS)} steps ok"
    ran = set(re.findall(r"^     task (\w+): ran in ", out, re.MULTILINE))
    assert ALWAYS_RUN <= ran, out
    if shutil.which("g++"):
        assert "binpack_cpp" in ran, out
    if HAVE and all(shutil.which(tool) for tool in ("g++", "cmake", "go", "javac", "node", "cargo")):
        assert "polyglot" in ran, out
    assert asked > 0, "no task called the model server"
    with zipfile.ZipFile(next((work / "dist").glob("clade_search-*-py3-none-any.whl"))) as wheel:
        names = set(wheel.namelist())
    assert {name.split("/")[0] for name in names if ".dist-info/" not in name} == {
        "agents_seed", "archive", "clade", "engine", "search", "tasks"
    }  # fmt: skip
    assert set(DATA) <= names, set(DATA) - names
