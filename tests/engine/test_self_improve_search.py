"""Whole `--mutator self` searches on repofix: the seed coding agent edits its own code, under bwrap.

The model behind every call is scripted (tests/engine/coding_model.py) and
answered through litellm's own offline path (mock_response) in-process, or by a
real OpenAI-compatible server on loopback for the run killed with SIGKILL.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest

from engine.front.cli import build_parser
from engine.front.run import run_from_args
from engine.sandbox.bwrap import bwrap_available
from tasks.repofix.task import HERE as REPOFIX
from tests.conftest import REPO, run_cli
from tests.engine.coding_model import RETRY, CodingModel
from tests.engine.llm.openai_stub import Answer, OpenAIStub
from tests.engine.test_coding_agent_runs import GRADER_UNREACHED, NO_BUDGET, SNOOP, digest, hostile
from tests.engine.test_search_e2e import assert_budget_invariants, only_run, read

BWRAP_OK, BWRAP_WHY = bwrap_available()
MODEL = "openai/gpt-4o-mini"
DEV = ["rf01", "rf02", "rf03", "rf04", "rf05", "rf06"]
HOLDOUT = ["rf21", "rf22"]
FLAKY = {"rf02", "rf03", "rf05"}  # the model's first edit misquotes the file: only an agent that retries resolves them


def subset(tmp_path) -> str:
    path = tmp_path / "subset.json"
    path.write_text(json.dumps({"dev": DEV, "holdout": HOLDOUT}))
    return str(path)


def args_for(tmp_path, *extra: str, runs: str = "runs") -> list[str]:
    return [
        "--task",
        "repofix",
        "--mutator",
        "self",
        "--model",
        MODEL,
        "--instances",
        subset(tmp_path),
        "--max-failed-expansions",
        "30",
        "--run-dir",
        str(tmp_path / runs),
        "--quiet",
        *extra,
    ]


def resolved(run, node: int) -> int:
    return read(
        run, f"SELECT sum((metrics->>'resolved')::INT) FROM evaluations WHERE node_id = {node} AND split = 'dev'"
    )[0][0]


@pytest.mark.slow
@pytest.mark.bwrap
@pytest.mark.skipif(not BWRAP_OK, reason=BWRAP_WHY)
def test_a_self_improving_hgm_search_under_bwrap_is_complete_and_replays_at_no_cost(tmp_path):
    model = CodingModel(flaky=FLAKY)
    argv = args_for(
        tmp_path, "--policy", "hgm", "--budget", "30", "--workers", "2", "--sandbox", "bwrap", "--seed", "1"
    )
    assert run_from_args(build_parser().parse_args(argv), llm_mock=model) == 0
    run = only_run(tmp_path / "runs")
    assert_budget_invariants(run, 30)

    # children come from the parent's own edits of itself, each checked before it was stored
    nodes = read(run, "SELECT id, parent_id, status, mutator, reason, diff FROM nodes ORDER BY id")
    children = nodes[1:]
    assert children and all(n[3] == "self" for n in children)
    valid = [n for n in children if n[2] == "valid"]
    assert len(valid) >= 3
    assert all(n[5].startswith("--- a/agent.py") for n in valid)
    assert all(n[4] for n in children if n[2] != "valid")  # every rejected child says why
    expands = read(
        run, "SELECT node_id, detail->>'child', detail->>'key' FROM events WHERE kind = 'expand' ORDER BY seq"
    )
    assert [int(c) for _, c, _ in expands] == [n[0] for n in children]
    assert all(key.startswith(f"self parent {parent} child ") for parent, _, key in expands)

    # the capability the seed lacks: the child that retries a failed edit resolves more dev instances
    retry = next(n[0] for n in valid if n[1] == 0 and RETRY.splitlines()[1].strip() in n[5])
    assert read(run, f"SELECT count(*) FROM evaluations WHERE node_id = {retry} AND split = 'dev'")[0][0] == len(DEV)
    assert resolved(run, 0) == len(DEV) - len(FLAKY)
    assert resolved(run, retry) == len(DEV) > resolved(run, 0)

    # every model call booked by purpose, against the node it was made for
    purposes = dict(read(run, "SELECT purpose, count(*) FROM llm_calls GROUP BY 1"))
    assert {"self_improve", "agent", "smoke"} <= set(purposes)
    assert (
        read(
            run,
            "SELECT count(*) FROM llm_calls WHERE purpose = 'self_improve' AND node_id NOT IN "
            "(SELECT parent_id FROM nodes WHERE parent_id IS NOT NULL)",
        )[0][0]
        == 0
    )
    assert read(run, "SELECT count(*) FROM llm_calls WHERE purpose = 'agent' AND instance_id IS NULL")[0][0] == 0
    assert read(run, "SELECT count(*) FROM llm_calls WHERE error IS NOT NULL")[0][0] == 0

    # trajectories: every evaluation that ran the agent, and every self-edit, with its steps
    missing = read(
        run,
        "SELECT e.node_id, e.instance_id FROM evaluations e WHERE e.status = 'ok' AND NOT EXISTS "
        "(SELECT 1 FROM trajectory_steps t WHERE t.kind = 'evaluation' AND t.node_id = e.node_id "
        "AND t.instance_id = e.instance_id)",
    )
    assert missing == []
    made = read(
        run,
        "SELECT id FROM nodes WHERE id > 0 AND id NOT IN "
        "(SELECT node_id FROM trajectory_steps WHERE kind = 'expansion')",
    )
    assert made == []
    steps = read(
        run,
        "SELECT tool, action, result, tokens_in + tokens_out FROM trajectory_steps "
        f"WHERE kind = 'expansion' AND node_id = {retry} ORDER BY step",
    )
    assert [s[0] for s in steps] == ["view", "edit", "finish"]
    assert "agent.py" in steps[0][1] and "known limit 1" in steps[1][1] and all(s[3] > 0 for s in steps)
    assert read(run, "SELECT count(*) FROM evaluations WHERE split = 'holdout'")[0][0] == len(HOLDOUT) * 2

    # the replay grows the same tree with every answer from the archive: no new call, nothing spent
    replay = ["--replay", str(run), "--run-dir", str(tmp_path / "replayed"), "--quiet"]
    assert run_from_args(build_parser().parse_args(replay)) == 0  # no mock: an unknown question would fail
    replayed = only_run(tmp_path / "replayed")
    tree = "SELECT id, parent_id, status, code_hash FROM nodes ORDER BY id"
    assert read(replayed, tree) == read(run, tree)
    results = "SELECT node_id, instance_id, split, status, score FROM evaluations ORDER BY ALL"
    assert read(replayed, results) == read(run, results)
    assert read(replayed, "SELECT count(*) FROM llm_calls")[0][0] == 0


def stub_answers(model: CodingModel):
    def respond(body, n):
        messages = body["messages"]
        if messages[0]["role"] != "system":  # the run's probe of the model before it starts
            return Answer("OK")
        return Answer(model("openai/stub", messages, 0))

    return respond


@pytest.mark.slow
def test_kill_9_during_a_self_improving_search_then_resume(tmp_path):
    model = CodingModel(flaky=FLAKY)
    with OpenAIStub(stub_answers(model)) as stub:
        argv = args_for(tmp_path, "--budget", "14", "--workers", "2", "--api-base", stub.url)  # --sandbox auto
        argv = [a if a != MODEL else "openai/stub" for a in argv if a != "--quiet"]
        env = dict(os.environ, PYTHONPATH=str(REPO))
        proc = subprocess.Popen(
            [sys.executable, "-m", "engine.search", *argv],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        seen = ""
        try:
            deadline = time.monotonic() + 120
            for line in proc.stdout:
                seen += line
                if line.startswith("evaluations 7/14") or time.monotonic() > deadline:
                    break
            assert "evaluations 7/14" in seen, seen
            os.kill(proc.pid, signal.SIGKILL)  # mid-run: evaluations and a self-improvement may be in flight
        finally:
            proc.kill()
            proc.wait()
        run = only_run(tmp_path / "runs")
        # group commit (archive/group_commit.py): the results of the last 20 ms, at most one per worker here,
        # may have been shown and not yet committed; the resume measures them again
        assert 7 - 2 <= read(run, "SELECT count(*) FROM evaluations WHERE split = 'dev'")[0][0] < 14
        paid = read(run, "SELECT count(*) FROM llm_calls")[0][0]
        out = run_cli("--resume", str(run), "--quiet")
        assert out.returncode == 0, out.stderr + out.stdout
    assert_budget_invariants(run, 14)
    assert read(run, "SELECT status FROM runs")[0][0] == "finished"
    # nothing answered before the kill was paid for again: each request hash is booked once
    assert (
        read(
            run,
            "SELECT count(*) FROM (SELECT request_hash FROM llm_calls WHERE error IS NULL "
            "GROUP BY 1 HAVING count(*) > 1)",
        )[0][0]
        == 0
    )
    assert read(run, "SELECT count(*) FROM llm_calls")[0][0] >= paid
    assert read(run, "SELECT count(*) FROM nodes WHERE mutator = 'self' AND status = 'valid'")[0][0] >= 1


def hostile_self_edits(source: str, n: int, statement: str) -> tuple[str, str]:
    """The n-th self-edit: delete the budget check, break the entry point, then snoop and call out."""
    if n == 1:
        return NO_BUDGET
    if n == 2:
        return "def solve(problem: dict) -> str:", "def solve_problem(problem: dict) -> str:"
    snooping = hostile({"agent.py": source}, "snoop")["agent.py"]
    head = "def solve(problem: dict) -> str:\n"
    return head, snooping[snooping.index(SNOOP.splitlines()[1]) : snooping.index(head)] + head + "    snoop(problem)\n"


@pytest.mark.slow
@pytest.mark.bwrap
@pytest.mark.skipif(not BWRAP_OK, reason=BWRAP_WHY)
def test_hostile_self_edits_are_contained_and_stored_with_their_reasons(tmp_path):
    (tmp_path / "two.json").write_text(json.dumps({"dev": ["rf01", "rf04"], "holdout": []}))
    model = CodingModel(self_edit=hostile_self_edits, loop_on={"rf04"})  # on rf04 the model never finishes
    grader = digest(REPOFIX / "check.py")
    argv = [
        "--task",
        "repofix",
        "--mutator",
        "self",
        "--model",
        MODEL,
        "--instances",
        str(tmp_path / "two.json"),
        "--policy",
        "best_of_n",
        "--budget",
        "6",
        "--workers",
        "1",
        "--sandbox",
        "bwrap",
        "--agent-max-tokens",
        "700",
        "--run-dir",
        str(tmp_path / "runs"),
        "--quiet",
    ]
    assert run_from_args(build_parser().parse_args(argv), llm_mock=model) == 0
    run = only_run(tmp_path / "runs")
    nodes = {
        n: (status, reason, diff)
        for n, status, reason, diff in read(run, "SELECT id, status, reason, diff FROM nodes WHERE id > 0 ORDER BY id")
    }
    no_budget, broken, snoop = 1, 2, 3
    assert "+    return True" in nodes[no_budget][2] and nodes[no_budget][0] == "valid"
    assert nodes[broken][:2] == ("invalid", "entry function solve missing from agent.py (no top-level def)")
    assert nodes[snoop][0] == "valid" and "snoop(problem)" in nodes[snoop][2]
    results = {
        (n, i): (status, feedback, stdout)
        for n, i, status, feedback, stdout in read(
            run, "SELECT node_id, instance_id, status, feedback, stdout_tail FROM evaluations"
        )
    }
    # the seed stops itself on the endless instance; without its budget check the gateway's cap stops it
    assert results[(0, "rf04")][0] == "ok"
    assert results[(no_budget, "rf04")][:2] == ("error", results[(no_budget, "rf04")][1]) and results[
        (no_budget, "rf04")
    ][1].startswith("agent token cap of 700 exceeded")
    # the snooping child found nothing to read, could write no grader and reach no network
    report = json.loads(next(x for x in results[(snoop, "rf01")][2].splitlines() if x.startswith("SNOOP "))[6:])
    assert report["hidden"] == "FileNotFoundError" and report["grader"] in GRADER_UNREACHED
    assert digest(REPOFIX / "check.py") == grader  # the host's grader untouched, wherever the checkout lies
    assert report["network"] == "OSError"
    assert "edited the tests (ignored)" in results[(snoop, "rf01")][1]


@pytest.mark.slow
def test_diagnose_then_implement_with_sicas_utility_as_the_score_the_search_sees(tmp_path):
    model = CodingModel(flaky=FLAKY)
    argv = args_for(
        tmp_path,
        "--budget",
        "8",
        "--workers",
        "1",
        "--sandbox",
        "process",
        "--meta-steps",
        "diagnose,implement",
        "--utility",
        "score=0.5,cost=0.25,time=0.25",
        "--cost-cap",
        "0.0005",
        "--time-cap",
        "60",
    )
    assert run_from_args(build_parser().parse_args(argv), llm_mock=model) == 0
    run = only_run(tmp_path / "runs")
    # DGM's two steps: a diagnosis call, whose plan the self-improving agent is given
    diagnoses = read(run, "SELECT node_id, request->>'key' FROM llm_calls WHERE purpose = 'diagnose'")
    assert diagnoses and model.calls["diagnose"] == len(diagnoses)
    first = read(run, "SELECT request FROM llm_calls WHERE purpose = 'self_improve' ORDER BY id LIMIT 1")[0][0]
    assert "## Diagnosis (a review of the agent's failures" in first and "Report the failure to the model" in first
    # asymmetric information (SIA): the reviewer read the log and the tries, the implementing agent only its plan
    review = read(run, "SELECT request FROM llm_calls WHERE purpose = 'diagnose' ORDER BY id LIMIT 1")[0][0]
    assert "## The log of problem" in review and "## The log of problem" not in first
    # each diagnosis is its child's improvement note; a later review of the lineage sees the earlier notes
    notes = read(run, "SELECT id, parent_id, note FROM nodes WHERE note IS NOT NULL ORDER BY id")
    assert len(notes) == len(diagnoses) and all("1. " in note for _, _, note in notes)
    assert {note.split(". ")[1] for _, _, note in notes} == {"A failed edit ends the run", "It stops too early"}
    # SICA's utility is the score; the task's own figures stay beside it
    rows = read(
        run,
        "SELECT e.node_id, e.instance_id, e.score, e.metrics, e.runtime_s, "
        "(SELECT sum(cost_usd) FROM llm_calls c WHERE c.node_id = e.node_id AND c.purpose = 'agent' "
        "AND c.instance_id = e.instance_id) FROM evaluations e WHERE split = 'dev'",
    )
    assert len(rows) == 8
    for _node, _instance, score, metrics, runtime, paid in rows:
        m = json.loads(metrics)
        assert m["task_score"] == m["hidden_passed"] / m["hidden_total"]  # the task's own figures stay
        assert m["cost_usd"] == pytest.approx(paid) and m["time_s"] == pytest.approx(runtime, abs=1e-3)
        expected = 0.5 * m["task_score"] + 0.25 * (1 - min(1, paid / 0.0005)) + 0.25 * (1 - min(1, runtime / 60))
        assert score == pytest.approx(m["utility"]) == pytest.approx(expected, abs=1e-4)
    # a cheaper run of the same quality scores higher: the seed's flaky instances cost one call, the others two
    by_instance = {i: (s, json.loads(m)) for n, i, s, m, *_ in rows if n == 0}
    assert by_instance["rf02"][1]["cost_usd"] < by_instance["rf01"][1]["cost_usd"]


def test_self_improvement_needs_an_agent_that_calls_a_model(tmp_path):
    from engine.errors import UserError

    argv = ["--task", "binpack", "--mutator", "self", "--model", MODEL, "--run-dir", str(tmp_path / "runs")]
    with pytest.raises(UserError, match="--mutator self runs the agent on its own code"):
        run_from_args(build_parser().parse_args(argv), llm_mock=CodingModel())
    assert not (tmp_path / "runs").exists()
    for bad, why in (
        (["--mutator", "self"], "the self mutator needs --model"),
        (["--utility", "score=2"], "between 0 and 1"),
        (["--cost-cap", "3"], "give --utility too"),
        (["--mutator", "selfish"], "unknown mutator"),
    ):
        out = run_cli("--task", "repofix", *bad, "--run-dir", str(tmp_path / "runs"))
        assert out.returncode == 2 and why in out.stderr and out.stderr.count("\n") == 1, out.stderr
