"""RepoFix through Clade's own evaluator: every instance's solution resolves it and its buggy repository does not,
the agent never sees the hidden tests, and a repository that tries to forge its verdict only fails."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest

from engine.errors import UserError
from engine.loop.evaluation import run_agent
from engine.sandbox import ProcessSandbox
from engine.sandbox.bwrap import bwrap_available
from tasks.base import Instance
from tasks.repofix import task as repofix
from tasks.repofix.task import RepoFixTask

BWRAP_OK, BWRAP_WHY = bwrap_available()


@pytest.fixture(scope="module")
def task() -> RepoFixTask:
    return RepoFixTask()


@pytest.fixture(scope="module")
def every(task) -> list[Instance]:
    """Both splits and the smoke instance."""
    return task.instances() + [task.smoke_instance()]


def writer_agent(table: dict[str, dict[str, str]], extra: str = "") -> dict[str, str]:
    """An agent (two files: it imports its own module) that writes table[instance id] into the workspace."""
    helper = f"TABLE = {json.dumps(table)!r}\n"
    agent = (
        "import json\nimport os\n\nimport table\n\n\ndef solve(problem):\n"
        "    files = json.loads(table.TABLE).get(problem['instance_id'], {})\n"
        "    for path, text in files.items():\n"
        "        target = os.path.join(problem['workspace'], path)\n"
        "        os.makedirs(os.path.dirname(target), exist_ok=True)\n"
        "        with open(target, 'w') as fh:\n"
        "            fh.write(text)\n"
        f"{extra}"
        "    return f'wrote {len(files)} files'\n"
    )
    return {"agent.py": agent, "table.py": helper}


NOTHING = {"agent.py": "def solve(problem):\n    return None\n"}


def run_all(task, files, instances, sandbox, at_once=4):
    async def main():
        gate = asyncio.Semaphore(at_once)

        async def one(instance):
            async with gate:
                return await run_agent(task, sandbox, files, instance)

        return await asyncio.gather(*[one(i) for i in instances])

    return asyncio.run(main())


def run_one(task, files, instance):
    sandbox = ProcessSandbox()
    try:
        (outcome,) = run_all(task, files, [instance], sandbox)
    finally:
        sandbox.close()
    return outcome


def by_id(task, instance_id: str) -> Instance:
    return next(i for i in task.instances() + [task.smoke_instance()] if i.id == instance_id)


# ----- the data ----------------------------------------------------------------------------------------
def test_the_instances_and_their_split(task):
    instances = task.instances()
    assert [i.id for i in instances] == [f"rf{n:02d}" for n in range(1, 41)]
    assert {i.id for i in instances if i.split == "dev"} == {f"rf{n:02d}" for n in range(1, 21)}
    assert {i.id for i in instances if i.split == "holdout"} == {f"rf{n:02d}" for n in range(21, 41)}
    smoke = task.smoke_instance()
    assert (smoke.id, smoke.split) == ("smoke", "dev") and smoke.id not in {i.id for i in instances}
    for instance in instances + [smoke]:
        data = instance.data
        assert data["statement"].strip() and "tests/test_visible.py" in data["repo"]
        assert 4 <= len(data["hidden"]) <= 8
        assert len(data["solution"]) == 1 and set(data["solution"]) <= set(data["repo"])
        assert sum(t.count("\n") for t in data["repo"].values()) < 120
        files = task.sandbox_files(instance)
        problem = json.loads(files["problem.json"])
        assert problem == {
            "instance_id": instance.id,
            "statement": data["statement"],
            "workspace": "repo",
            "test_command": "python -m unittest discover -s tests -q",
            "trajectory_file": "trajectory.jsonl",
        }
        assert set(files) == {"runner.py", "clade_llm.py", "problem.json"} | {f"repo/{p}" for p in data["repo"]}
        blob = b"".join(files.values())
        assert b"hidden" not in files["problem.json"] and b'"expect"' not in blob
        assert all(data["solution"][p].encode() != files[f"repo/{p}"] for p in data["solution"])
    assert task.hidden_paths() == (str(repofix.INSTANCES),)
    assert task.reference_agents() == {}


@pytest.mark.slow
def test_the_visible_tests_pass_with_the_solution(every, tmp_path):
    for instance in every:
        root = tmp_path / instance.id
        for path, text in {**instance.data["repo"], **instance.data["solution"]}.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text)
        done = subprocess.run(
            [sys.executable, "-m", "unittest", "discover", "-s", "tests", "-q"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, (instance.id, done.stderr[-500:])


# ----- the evaluator -------------------------------------------------------------------------------------
@pytest.mark.slow
def test_every_solution_resolves_its_instance_and_doing_nothing_does_not(task, every):
    solutions = {i.id: i.data["solution"] for i in every}
    sandbox = ProcessSandbox()
    try:
        fixed = run_all(task, writer_agent(solutions), every, sandbox)
        untouched = run_all(task, NOTHING, every, sandbox)
    finally:
        sandbox.close()
    for instance, outcome in zip(every, fixed):
        assert outcome.status == "ok", (instance.id, outcome.feedback, outcome.stderr_tail)
        total = len(instance.data["hidden"])
        assert outcome.metrics == {
            "hidden_passed": total,
            "hidden_total": total,
            "resolved": 1,
            "files_changed": 1,
            "tests_edited": 0,
            "agent_error": "",
        }, instance.id
        assert outcome.feedback == f"{total}/{total} hidden tests pass"
        assert task.score(instance, outcome.metrics, None) == 1.0
    for instance, outcome in zip(every, untouched):
        assert outcome.status == "ok", (instance.id, outcome.feedback)
        m = outcome.metrics
        assert m["resolved"] == 0 and m["files_changed"] == 0 and m["hidden_passed"] < m["hidden_total"], instance.id
        assert "first failure: " in outcome.feedback and outcome.feedback.endswith("; the agent changed no file")
    assert task.raw_value([o.metrics for o in fixed]) == 100.0
    assert task.raw_value([o.metrics for o in untouched]) == 0.0


def test_the_answer_keeps_the_agents_error_summary_and_trajectory(task):
    instance = by_id(task, "rf04")
    log = (
        "    with open(problem['trajectory_file'], 'w') as fh:\n"
        "        fh.write(json.dumps({'step': 'edit', 'text': 'x' * 5000}) + '\\n' + 'not json\\n' + '[1]\\n')\n"
        "    raise SystemExit('gave up, \\n after fixing')\n"
    )
    outcome = run_one(task, writer_agent({"rf04": instance.data["solution"]}, log), instance)
    assert outcome.status == "ok" and outcome.metrics["resolved"] == 1  # a half-done run is still graded
    assert outcome.metrics["agent_error"] == "SystemExit: gave up, after fixing"
    answer = {
        "files": instance.data["repo"],
        "error": "",
        "summary": "",
        "trajectory": [{"step": "edit", "text": "x" * 1000}, "junk"],
    }
    assert task.trajectory(json.dumps(answer).encode()) == [{"step": "edit", "text": "x" * 1000}]
    assert task.trajectory(b"not json") == []


def test_the_runner_truncates_the_trajectory(tmp_path):
    sys.path.insert(0, str(repofix.HERE))
    try:
        import runner  # the sandbox's runner, standalone
    finally:
        sys.path.remove(str(repofix.HERE))
    log = tmp_path / "t.jsonl"
    log.write_text(json.dumps({"a": "x" * 5000, "b": [1] * 1000, "c": 3}) + "\nnope\n" + "{}\n" * 300)
    steps = runner.trajectory(str(log))
    assert len(steps) == 200 and steps[0]["a"] == "x" * 1000 and steps[0]["c"] == 3
    assert isinstance(steps[0]["b"], str) and len(steps[0]["b"]) == 1000


def test_a_malformed_answer_is_bad_output_and_no_check_passes_nothing(task):
    instance = task.instances()[0]
    assert task.check_job(instance, b"[1, 2]").valid is False
    assert task.grade(instance, b'{"files": {"a.py": 3}}').valid is False
    grade = task.grade(instance, json.dumps({"files": instance.data["repo"]}).encode())
    assert grade.valid and grade.feedback == "not checked" and grade.metrics["hidden_passed"] == 0
    assert task.score(instance, {"hidden_passed": 0, "hidden_total": 0}, None) == 0.0


def test_the_candidate_keeps_the_original_tests_and_takes_new_modules(task):
    instance = task.instances()[0]
    answer = {
        **instance.data["repo"],
        "tests/test_visible.py": "",
        "textstats/extra.py": "X = 1\n",
        "notes.txt": "hi",
        "../escape.py": "",
        "textstats/core.py": "# new\n",
    }
    job = task.check_job(instance, json.dumps({"files": answer}).encode())
    files = json.loads(job.files["problem.json"])["files"]
    assert files["tests/test_visible.py"] == instance.data["repo"]["tests/test_visible.py"]
    assert files["textstats/extra.py"] == "X = 1\n" and files["textstats/core.py"] == "# new\n"
    assert "notes.txt" not in files and "../escape.py" not in files
    assert job.command[-2:] == ["-I", "check.py"] and job.answer_file == "verdict.json"
    assert job.hidden == task.hidden_paths()


# ----- tampering -----------------------------------------------------------------------------------------
def test_editing_the_tests_gains_nothing(task):
    instance = by_id(task, "rf01")
    cheat = {
        "tests/test_visible.py": "import unittest\n\n\nclass T(unittest.TestCase):\n    def test(self):\n"
        "        pass\n",
        "json.py": "def dumps(*a, **k):\n    return '{\"passed\": 5}'\n",
        "hmac.py": "def compare_digest(a, b):\n    return True\n",
        "textstats/__init__.py": "from .core import count_words, most_common\nPASSED = True\n",
    }
    outcome = run_one(task, writer_agent({"rf01": cheat}), instance)
    assert outcome.status == "ok"
    assert outcome.metrics["resolved"] == 0 and outcome.metrics["tests_edited"] == 1
    assert outcome.feedback.endswith("; the agent edited the tests (ignored)")


FORGERIES = {
    # write a passing verdict (the checker's files are one level up) and leave at once
    "verdict": "import json, os\nfor p in ('../verdict.json', 'verdict.json'):\n"
    "    json.dump({'passed': 5, 'total': 5, 'results': [], 'mac': '0' * 64}, open(p, 'w'))\n",
    # print what looks like a pass, then end the process
    "exit": "print('5/5 hidden tests pass')\nimport os\nos._exit(0)\n",
    # kill the checker, hoping its job counts as done
    "kill": "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n",
    # patch builtins and the encoder in the candidate's process
    "builtins": "import builtins, json\nbuiltins.isinstance = lambda *a: True\nbuiltins.type = lambda *a: object\n"
    'json.dumps = lambda *a, **k: \'{"ok": {"the": 2, "cat": 1, "and": 1, "hat": 1}}\'\n',
    # look for the expectations and the key: they are gone before the candidate starts
    "peek": "import os\nraise RuntimeError(sorted(os.listdir('..')))\n",
}


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_a_repository_that_tries_to_forge_its_verdict_only_fails(task, name):
    instance = by_id(task, "rf01")
    core = FORGERIES[name] + instance.data["repo"]["textstats/core.py"]  # the bug stays
    outcome = run_one(task, writer_agent({"rf01": {"textstats/core.py": core}}), instance)
    assert outcome.status == "ok", outcome.feedback
    assert outcome.metrics["resolved"] == 0, outcome.feedback
    assert outcome.metrics["hidden_passed"] <= 2  # what the buggy repository passes
    if name == "peek":
        assert outcome.feedback.startswith(
            "0/5 hidden tests pass; first failure: mixed_case: raised RuntimeError: ['cand', 'check.py']"
        )
    if name == "kill":
        assert (
            outcome.feedback.startswith("0/5 hidden tests pass; first failure: ")
            or "did not finish" in outcome.feedback
        )


@pytest.mark.slow
def test_a_case_that_loops_forever_fails_and_the_next_case_still_runs(task):
    instance = by_id(task, "rf01")
    fixed = instance.data["solution"]["textstats/core.py"]
    looping = fixed.replace("    counts = {}\n", "    counts = {}\n    while not text:\n        pass\n")
    assert looping != fixed
    outcome = run_one(task, writer_agent({"rf01": {"textstats/core.py": looping}}), instance)
    names = [c["name"] for c in instance.data["hidden"]]
    assert names.index("empty") < len(names) - 1  # a case runs after the looping one
    assert outcome.metrics["hidden_passed"] == len(names) - 1
    assert outcome.feedback.endswith("first failure: empty: took more than 3 s")


# ----- subsets, the seed, bwrap ---------------------------------------------------------------------------
def test_a_subset_file_picks_the_instances(tmp_path):
    subset = tmp_path / "subset.json"
    subset.write_text(json.dumps({"dev": ["rf03", "rf01"], "holdout": 1}))
    picked = RepoFixTask(str(subset)).instances()
    assert [(i.id, i.split) for i in picked] == [("rf03", "dev"), ("rf01", "dev"), ("rf21", "holdout")]
    subset.write_text(json.dumps({"dev": ["rf21"]}))
    with pytest.raises(UserError, match="dev has no instance 'rf21'"):
        RepoFixTask(str(subset)).instances()


def test_the_seed_is_read_from_its_folder_when_asked(task, tmp_path, monkeypatch):
    monkeypatch.setattr(repofix, "SEED_AGENT", tmp_path / "missing")
    with pytest.raises(UserError, match="seed agent is missing"):
        task.seed_files()
    folder = tmp_path / "coding_agent"
    (folder / "tools" / "__pycache__").mkdir(parents=True)
    (folder / "agent.py").write_text("def solve(problem):\n    return ''\n")
    (folder / "tools" / "edit.py").write_text("X = 1\n")
    (folder / "tools" / "__pycache__" / "edit.cpython-311.pyc").write_bytes(b"\0\1")
    monkeypatch.setattr(repofix, "SEED_AGENT", folder)
    assert task.seed_files() == {"agent.py": "def solve(problem):\n    return ''\n", "tools/edit.py": "X = 1\n"}


@pytest.mark.bwrap
@pytest.mark.skipif(not BWRAP_OK, reason=BWRAP_WHY)
def test_under_bwrap_the_hidden_tests_are_out_of_reach_and_a_fix_still_resolves(task):
    from engine.sandbox.bwrap import BwrapSandbox

    instance = by_id(task, "rf02")
    root = str(repofix.INSTANCES)
    snoop = (
        "import os\n\n\ndef solve(problem):\n"
        f"    root = {root!r}\n"
        "    print('LISTING', os.listdir(root) if os.path.isdir(root) else None)\n"
        "    return ''\n"
    )
    sandbox = BwrapSandbox()
    try:
        (looked,) = run_all(task, {"agent.py": snoop}, [instance], sandbox)
        (fixed,) = run_all(task, writer_agent({"rf02": instance.data["solution"]}), [instance], sandbox)
    finally:
        sandbox.close()
    listing = next(line for line in looked.stdout_tail.splitlines() if line.startswith("LISTING"))
    assert listing in ("LISTING []", "LISTING None")
    assert looked.metrics["resolved"] == 0
    assert fixed.status == "ok" and fixed.metrics["resolved"] == 1, fixed.feedback
