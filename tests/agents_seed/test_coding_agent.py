"""The seed coding agent, driven by a scripted fake `clade_llm`: its tools, budgets, trajectory and known limits."""
from __future__ import annotations

import importlib.util
import json
import sys
import types
from pathlib import Path

import pytest

AGENT = Path(__file__).resolve().parents[2] / "agents_seed" / "coding_agent" / "agent.py"
BUGGY = "def add(a, b):\n    return a - b\n"
TEST = ("import unittest\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n")
TEST_COMMAND = f"{sys.executable} -m unittest discover -s tests -q"


class FakeLLMError(RuntimeError):
    pass


def action(**fields) -> str:
    """A model answer holding one action, as the system prompt asks."""
    return f"Thinking about it.\n```json\n{json.dumps(fields)}\n```\n"


class ScriptedModel:
    """Answers from a list, in order, with fixed usage; records every call's messages and parameters."""

    def __init__(self, answers: list[str], usage: dict | None = None, repeat_last: bool = False):
        self.answers, self.usage, self.repeat_last = list(answers), usage, repeat_last
        self.calls: list[tuple[list, dict]] = []

    def complete(self, messages, **params):
        self.calls.append(([dict(m) for m in messages], params))
        if not self.answers:
            raise FakeLLMError("script exhausted")
        text = self.answers[0] if self.repeat_last and len(self.answers) == 1 else self.answers.pop(0)
        return {"choices": [{"message": {"content": text}}],
                "usage": self.usage or {"prompt_tokens": 10, "completion_tokens": 20}}


@pytest.fixture
def load_agent(monkeypatch):
    """Load agent.py by path with a fake clade_llm in sys.modules (the agent is data, not a package)."""
    def load(model: ScriptedModel):
        fake = types.ModuleType("clade_llm")
        fake.complete = model.complete
        fake.LLMError = FakeLLMError
        monkeypatch.setitem(sys.modules, "clade_llm", fake)
        spec = importlib.util.spec_from_file_location("coding_agent_under_test", AGENT)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    return load


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Path:
    """A tiny buggy repository in tmp_path/work/repo; the cwd is tmp_path/work."""
    work = tmp_path / "work"
    (work / "repo" / "tests").mkdir(parents=True)
    (work / "repo" / "calc.py").write_text(BUGGY)
    (work / "repo" / "tests" / "test_calc.py").write_text(TEST)
    (work / "repo" / "__pycache__").mkdir()
    (work / "repo" / "__pycache__" / "calc.cpython.pyc").write_text("x")
    (work / "repo" / ".git").mkdir()
    (work / "repo" / ".git" / "HEAD").write_text("ref")
    monkeypatch.chdir(work)
    return work / "repo"


def problem(**extra) -> dict:
    return {"instance_id": "calc-1", "statement": "`add` subtracts instead of adding.", "workspace": "repo",
            "test_command": TEST_COMMAND, "trajectory_file": "traj/steps.jsonl", **extra}


def trajectory(repo: Path) -> list[dict]:
    path = repo.parent / "traj" / "steps.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_a_correct_script_fixes_the_file_and_writes_the_trajectory(load_agent, repo, capsys):
    model = ScriptedModel([
        action(tool="view", path="calc.py"),
        action(tool="edit", path="calc.py", search="return a - b", replace="return a + b"),
        action(tool="test"),
        action(tool="finish", summary="add now adds\n(fixed the operator)"),
    ])
    summary = load_agent(model).solve(problem())
    assert summary == "add now adds (fixed the operator)"
    assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    steps = trajectory(repo)
    assert [s["step"] for s in steps] == [0, 1, 2, 3]
    assert [s["tool"] for s in steps] == ["view", "edit", "test", "finish"]
    for s in steps:
        assert set(s) == {"step", "tool", "action", "tokens_in", "tokens_out", "time_s", "result"}
        assert (s["tokens_in"], s["tokens_out"]) == (10, 20)
        assert isinstance(s["time_s"], float) and s["time_s"] >= 0
        assert len(s["action"]) <= 500 and len(s["result"]) <= 500
    assert "    2  " in steps[0]["result"] and "return a - b" in steps[0]["result"]
    assert steps[2]["result"].startswith("exit code 0")
    # the first message names the files (not __pycache__ or hidden dirs) and the test command
    first = model.calls[0][0][1]["content"]
    assert "calc.py" in first and "tests/test_calc.py" in first and TEST_COMMAND in first
    assert "__pycache__" not in first and ".git" not in first
    # the conversation grows: each call sees all earlier answers and observations
    assert [len(call[0]) for call in model.calls] == [2, 4, 6, 8]
    assert model.calls[1][0][3]["content"].startswith("    1  def add")
    assert all(params == {"temperature": 0.0, "max_tokens": 2048} for _, params in model.calls)
    assert len(capsys.readouterr().out.strip().splitlines()) == 4


def test_a_failed_edit_ends_the_run_at_that_step(load_agent, repo):
    """Known limit 1: no retry, no feedback."""
    model = ScriptedModel([
        action(tool="edit", path="calc.py", search="return a * b", replace="return a + b"),
        action(tool="finish", summary="never reached"),
    ])
    summary = load_agent(model).solve(problem())
    assert summary == "edit failed: search text not found in 'calc.py'"
    assert len(model.calls) == 1 and (repo / "calc.py").read_text() == BUGGY
    assert [s["tool"] for s in trajectory(repo)] == ["edit"]

    (repo / "calc.py").write_text(BUGGY + BUGGY)
    model = ScriptedModel([action(tool="edit", path="calc.py", search="a - b", replace="a + b")])
    assert load_agent(model).solve(problem()).startswith("edit failed: search text found 2 times in 'calc.py'")


def test_an_unreadable_answer_ends_the_run(load_agent, repo):
    """Known limit 3."""
    for answer in ["I would change calc.py.", "```json\n{not json}\n```", action(tool="rm", path="x"),
                   action(tool="edit", path="calc.py")]:
        model = ScriptedModel([answer, action(tool="finish", summary="never reached")])
        summary = load_agent(model).solve(problem(trajectory_file=""))
        assert summary.startswith("no readable action"), answer
        assert len(model.calls) == 1


def test_the_unreadable_step_is_recorded_with_the_raw_answer(load_agent, repo):
    load_agent(ScriptedModel(["no action here"])).solve(problem())
    [step] = trajectory(repo)
    assert step["tool"] == "none" and step["action"] == "no action here"


def test_a_path_escaping_the_workspace_is_refused(load_agent, repo, tmp_path):
    outside = tmp_path / "outside.txt"
    model = ScriptedModel([
        action(tool="create", path="../outside.txt", content="escaped"),
        action(tool="create", path=str(outside), content="escaped"),
        action(tool="view", path="../../../../etc/passwd"),
        action(tool="edit", path="../repo/../../outside.txt", search="x", replace="y"),
        action(tool="create", path="pkg/new.py", content="ok = 1\n"),
        action(tool="finish", summary="done"),
    ])
    assert load_agent(model).solve(problem()) == "done"
    results = [s["result"] for s in trajectory(repo)]
    assert all("outside the workspace" in r for r in results[:4])
    assert not outside.exists() and not (repo.parent / "outside.txt").exists()
    assert (repo / "pkg" / "new.py").read_text() == "ok = 1\n"


def test_the_step_budget_stops_a_model_that_never_finishes(load_agent, repo):
    model = ScriptedModel([action(tool="shell", command="echo hi")], repeat_last=True)
    agent = load_agent(model)
    summary = agent.solve(problem())
    assert len(model.calls) == agent.MAX_STEPS == 20
    assert summary.startswith("budget spent: 20 steps")
    assert len(trajectory(repo)) == 20 and trajectory(repo)[0]["result"] == "exit code 0\nhi\n"


def test_the_token_budget_stops_the_run_when_usage_says_it_is_spent(load_agent, repo):
    model = ScriptedModel([action(tool="test")], usage={"prompt_tokens": 15_000, "completion_tokens": 1_000},
                          repeat_last=True)
    agent = load_agent(model)
    summary = agent.solve(problem())
    assert len(model.calls) == 3                       # 16k, 32k, 48k >= 40k: no fourth call
    assert summary == "budget spent: 3 steps, 48000 tokens"
    assert agent.within_budget(19, 39_999) and not agent.within_budget(20, 0) and not agent.within_budget(0, 40_000)


def test_a_model_error_ends_the_run(load_agent, repo):
    assert load_agent(ScriptedModel([])).solve(problem()) == "model error: script exhausted"


def test_shell_and_test_observations(load_agent, repo):
    model = ScriptedModel([action(tool="test"), action(tool="shell", command="exit 3"),
                           action(tool="view", path="missing.py"), action(tool="finish", summary="ok")])
    load_agent(model).solve(problem(test_command=""))
    results = [s["result"] for s in trajectory(repo)]
    assert results[0] == "there is no test command for this task"
    assert results[1].startswith("exit code 3")
    assert results[2] == "error: no file 'missing.py'"


def test_humaneval_mode_returns_the_completed_function(load_agent, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    prompt = 'def add(a, b):\n    """Return a + b."""\n'
    model = ScriptedModel([
        action(tool="view", path="solution.py"),
        action(tool="edit", path="solution.py", search='"""Return a + b."""\n',
               replace='"""Return a + b."""\n    return a + b\n'),
        action(tool="finish", summary="done"),
    ])
    source = load_agent(model).solve({"task_id": "HumanEval/0", "prompt": prompt, "entry_point": "add"})
    assert source == prompt + "    return a + b\n"
    namespace: dict = {}
    exec(source, namespace)
    assert namespace["add"](2, 3) == 5
    first = model.calls[0][0][1]["content"]
    assert "Complete the function `add` in solution.py (keep its signature)" in first
    assert "# Test command\n\n(none)" in first
    assert list(tmp_path.iterdir()) == []               # the temporary workspace is cleaned up
