"""The self-improvement runner in a real subprocess: which entry it calls, and what it hands back."""

from __future__ import annotations

import json
import subprocess
import sys

from engine.loop.self_improve import RUNNER

EDIT = """
import pathlib


def {name}(problem):
    target = pathlib.Path(problem["workspace"]) / "agent.py"
    target.write_text(target.read_text() + "# edited by {name}\\n")
    pathlib.Path(problem["workspace"], "notes.md").write_text("tried a retry")
    with open(problem["trajectory_file"], "a") as fh:
        fh.write('{{"step": 0, "tool": "edit", "result": "%s"}}\\nnot json\\n' % ("x" * 5000))
    {end}
"""


def run(tmp_path, source: str) -> dict:
    (tmp_path / "workspace" / "__pycache__").mkdir(parents=True)
    for folder in (tmp_path, tmp_path / "workspace"):
        (folder / "agent.py").write_text(source)
    (tmp_path / "workspace" / "__pycache__" / "agent.cpython-311.pyc").write_bytes(b"\0\1")
    (tmp_path / "self_runner.py").write_bytes(RUNNER.read_bytes())
    (tmp_path / "problem.json").write_text(
        json.dumps(
            {
                "statement": "improve",
                "workspace": "workspace",
                "trajectory_file": "trajectory.jsonl",
                "entry_file": "agent.py",
                "entry_function": "solve",
            }
        )
    )
    done = subprocess.run([sys.executable, "self_runner.py"], cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return json.loads((tmp_path / "answer.json").read_text())


def test_the_agents_improve_entry_runs_when_it_has_one_and_the_workspace_comes_back(tmp_path):
    source = EDIT.format(name="solve", end="return 'solve'") + EDIT.format(name="improve", end="return 'improved'")
    answer = run(tmp_path, source)
    assert answer["summary"] == "improved" and answer["error"] == ""
    assert set(answer["files"]) == {"agent.py", "notes.md"}  # caches left out
    assert answer["files"]["agent.py"].endswith("# edited by improve\n")
    (step,) = answer["trajectory"]  # the unreadable line is skipped, the long result cut
    assert step["tool"] == "edit" and len(step["result"]) == 1000


def test_an_agent_that_crashes_still_hands_back_what_it_edited(tmp_path):
    answer = run(tmp_path, EDIT.format(name="solve", end="raise RuntimeError('out of ideas')"))
    assert answer["error"] == "RuntimeError: out of ideas" and answer["summary"] == ""
    assert answer["files"]["agent.py"].endswith("# edited by solve\n")
