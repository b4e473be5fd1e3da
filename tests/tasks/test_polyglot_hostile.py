"""Agents that try to game Polyglot's grading gain nothing (under bwrap, as the default sandbox runs them).

Each hostile agent is a `solve(problem)` of its own, run as an evaluation is (engine.loop.evaluation.run_agent,
then the check job): it edits the tests to pass, reads the reference solution from wherever the exercises
are, writes outside its workspace (the job's folder, the test runner beside it, the home folder), or plants
code that forges the grader's verdict or ends the test run early with success. The honest agent that writes
the reference is the control: it resolves the exercise.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from engine.sandbox.bwrap import BwrapSandbox, bwrap_available
from tests.engine.test_coding_agent_runs import evaluate
from tests.tasks.polyglot_support import needs_exercises

BWRAP_OK, BWRAP_WHY = bwrap_available()
pytestmark = [needs_exercises, pytest.mark.slow, pytest.mark.bwrap, pytest.mark.skipif(not BWRAP_OK, reason=BWRAP_WHY)]
EXERCISES = "python/affine-cipher,go/beer-song"


def agent(body: str) -> dict[str, str]:
    """An agent whose solve(problem) runs `body` in the workspace (cwd: the job's folder)."""
    source = "import json, os, pathlib, sys\n\n\ndef solve(problem):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    return {"agent.py": source}


@pytest.fixture
def task(polyglot_dir):
    from tasks.polyglot.task import PolyglotTask

    task = PolyglotTask(instances_path=EXERCISES)
    task.instances()
    return task


def run(tmp_path, task, files):
    """{exercise id: outcome} of `files` on each exercise of the task, under bwrap."""
    sandbox = BwrapSandbox(toolchains=task.toolchains())
    outcomes, _ = evaluate(tmp_path, files, task.instances(), lambda *a: "", sandbox=sandbox, task=task)
    return {i.id: o for i, o in zip(task.instances(), outcomes, strict=True)}


def honest(task) -> dict[str, str]:
    """The control: writes each exercise's reference solution into its workspace."""
    references = {i.id: task.exercise(i).reference() for i in task.instances()}
    return agent(
        f"""
        references = {json.dumps(references)!s}
        for path, text in references[problem["instance_id"]].items():
            (pathlib.Path(problem["workspace"]) / path).write_text(text)
        return "wrote the reference"
        """
    )


def test_the_control_resolves_both(tmp_path, task):
    outcomes = run(tmp_path, task, honest(task))
    assert {i: o.metrics["resolved"] for i, o in outcomes.items()} == {i: 1 for i in outcomes}


def test_tests_edited_to_pass_gain_nothing(tmp_path, task):
    hostile = agent(
        """
        ws = pathlib.Path(problem["workspace"])
        for test in ws.glob("*_test.*"):
            if test.suffix == ".py":
                test.write_text("def test_nothing():\\n    assert True\\n")
            else:
                test.write_text('package beer\\n\\nimport "testing"\\n\\nfunc TestNothing(t *testing.T) {}\\n')
        (ws / "conftest.py").write_text("import pytest\\n")
        return "rewrote the tests"
        """
    )
    outcomes = run(tmp_path, task, hostile)
    assert all(o.metrics["resolved"] == 0 for o in outcomes.values())
    assert all(o.metrics["tests_total"] > 1 for o in outcomes.values())  # the original tests ran


def test_the_reference_solutions_cannot_be_read_from_the_sandbox(tmp_path, task):
    hostile = agent(
        f"""
        found = []
        for root in ({str(task.root)!r}, "/work", "/root", "/home", "/srv", "/opt", "/tmp"):
            for path in pathlib.Path(root).rglob("example*"):
                if ".meta" in path.parts:
                    found.append(str(path))
        name = problem["instance_id"].split("/")[1]
        mine = [p for p in found if f"/{{name}}/" in p]
        for path in mine:
            target = pathlib.Path(problem["workspace"]) / problem["solution_files"][0]
            target.write_text(pathlib.Path(path).read_text())
        return f"found {{len(found)}} references"
        """
    )
    outcomes = run(tmp_path, task, hostile)
    assert all(o.metrics["resolved"] == 0 for o in outcomes.values())
    assert all(o.metrics["files_changed"] == 0 for o in outcomes.values())


def test_writing_outside_the_workspace_gains_nothing(tmp_path, task):
    hostile = agent(
        """
        ws = pathlib.Path(problem["workspace"]).resolve()
        job = ws.parent
        (job / "tests.py").write_text("print('99 passed')\\n")  # the test runner beside the workspace
        (job / "conftest.py").write_text("import pytest\\n")
        (job / "verdict.json").write_text(json.dumps({"passed": 99, "total": 99, "passed_all": True, "mac": "0"}))
        for where in (pathlib.Path.home(), pathlib.Path("/tmp")):
            try:
                (where / "conftest.py").write_text("x = 1\\n")
            except OSError:
                pass
        return "wrote around the workspace"
        """
    )
    outcomes = run(tmp_path, task, hostile)
    assert all(o.metrics["resolved"] == 0 for o in outcomes.values())


PLANTED_PYTHON = """\
import json, os
forged = {"passed": 16, "total": 16, "passed_all": True, "mac": "f" * 64}
for folder in (os.getcwd(), os.path.dirname(os.getcwd())):
    try:
        with open(os.path.join(folder, "verdict.json"), "w") as fh:
            json.dump(forged, fh)
    except OSError:
        pass
os._exit(0)
"""
PLANTED_GO = """\
package beer

import "os"

func init() { os.Exit(0) }

func Song() string { return "" }

func Verses(a, b int) (string, error) { return "", nil }

func Verse(n int) (string, error) { return "", nil }
"""


def test_a_solution_that_forges_the_verdict_or_ends_the_run_early_gains_nothing(tmp_path, task):
    planted = {"python": ("affine_cipher.py", PLANTED_PYTHON), "go": ("beer_song.go", PLANTED_GO)}
    hostile = agent(
        f"""
        path, text = {json.dumps(planted)}[problem["language"]]
        (pathlib.Path(problem["workspace"]) / path).write_text(text)  # runs in the tests' own process
        return "planted"
        """
    )
    outcomes = run(tmp_path, task, hostile)
    assert all(o.metrics["resolved"] == 0 for o in outcomes.values()), {i: o.feedback for i, o in outcomes.items()}
    assert all(o.metrics["files_changed"] == 1 for o in outcomes.values()), {i: o.metrics for i, o in outcomes.items()}
