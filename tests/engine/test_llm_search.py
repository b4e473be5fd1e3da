"""Whole searches with the LLM mutator, driven through litellm's own offline answers (`mock_response`)."""

from __future__ import annotations

import os
import re

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest

from engine.errors import UserError
from engine.front.cli import build_parser
from engine.front.run import run_from_args
from tests.engine.test_search_e2e import only_run, read

MODEL = "openai/gpt-4o-mini"
PARENT = re.compile(r"# Current code \(the parent\)\nagent\.py\n```python\n(.*?)\n```", re.S)


def parent_return_line(messages: list[dict]) -> str:
    code = PARENT.search(messages[1]["content"]).group(1)
    return [line for line in code.splitlines() if line.strip().startswith("return ")][-1]


def good_diff(messages: list[dict], k: int) -> str:
    line = parent_return_line(messages)
    expression = line.strip()[len("return ") :]
    return (
        f"Change: add a best-fit term, weight {k}.\n\nagent.py\n<<<<<<< SEARCH\n{line}\n=======\n"
        f"    return ({expression}) - {0.1 * (k + 1):.1f} * (bins - item)\n>>>>>>> REPLACE\n"
    )


class ScriptedModel:
    """Answers by call number: each kind of answer a real model gives, in turn, then good diffs."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, model, messages, attempt):
        import litellm

        k = self.calls
        self.calls += 1
        script = {
            1: "Change: tweak.\n\nagent.py\n<<<<<<< SEARCH\n    return bins * 42\n=======\n    return bins\n"
            ">>>>>>> REPLACE\n",
            3: "I would make the priority prefer fuller bins, but I will not write code.",
            5: "Change: broken.\n\nagent.py\n<<<<<<< SEARCH\n"
            + parent_return_line(messages)
            + "\n=======\n    return -(bins - item\n>>>>>>> REPLACE\n",
            6: litellm.RateLimitError(message="slow down", llm_provider="openai", model=model),
        }
        return script.get(k, None) or good_diff(messages, k)


def search(tmp_path, instances_file, *extra: str, mock=None, runs="runs"):
    args = build_parser().parse_args(
        [
            "--model",
            MODEL,
            "--budget",
            "30",
            "--workers",
            "1",
            "--seed",
            "2",
            "--instances",
            str(instances_file),
            "--run-dir",
            str(tmp_path / runs),
            "--quiet",
            *extra,
        ]
    )
    return run_from_args(args, llm_mock=mock)


@pytest.mark.slow
def test_every_kind_of_answer_through_litellm(tmp_path, instances_file):
    model = ScriptedModel()
    assert search(tmp_path, instances_file, mock=model) == 0
    run = only_run(tmp_path / "runs")
    calls = read(run, "SELECT id, purpose, error, tokens_in, tokens_out, cost_usd FROM llm_calls ORDER BY id")
    assert len(calls) == model.calls >= 8
    assert [c[1] for c in calls[:4]] == ["mutate", "mutate", "retry", "mutate"]  # the bad block went back
    assert calls[6][2].startswith("RateLimitError")  # a failed attempt is a row, never an answer
    assert all(c[3] > 0 and c[5] is not None and c[5] > 0 for c in calls if c[2] is None)
    nodes = read(run, "SELECT id, status, reason, model, mutator FROM nodes WHERE id > 0 ORDER BY id")
    statuses = [n[1] for n in nodes]
    assert statuses[:4] == ["valid", "valid", "valid", "invalid"]
    assert "syntax" in nodes[3][2].lower()
    assert all(n[3] == MODEL and n[4] == "llm" for n in nodes)
    # the retried diff was built on the closest lines the model was shown
    retry_request = read(run, "SELECT request FROM llm_calls WHERE purpose = 'retry' ORDER BY id LIMIT 1")[0][0]
    assert "return bins * 42" in retry_request and "closest" in retry_request.lower()
    assert read(run, "SELECT count(*) FROM evaluations WHERE split = 'dev'")[0][0] == 30


def test_an_authentication_error_stops_with_one_line(tmp_path, instances_file):
    import litellm

    def bad_key(model, messages, attempt):
        return litellm.AuthenticationError(message="Incorrect API key provided", llm_provider="openai", model=model)

    with pytest.raises(UserError, match="(?i)api key"):
        search(tmp_path, instances_file, mock=bad_key)
    run = only_run(tmp_path / "runs")
    assert read(run, "SELECT status FROM runs")[0][0] == "interrupted"
    assert read(run, "SELECT count(*) FROM llm_calls")[0][0] == 1  # no retry of a bad key


def test_a_duplicate_child_is_not_evaluated_again(tmp_path, instances_file):
    def same_answer(model, messages, attempt):
        line = parent_return_line(messages)
        return f"Change: same.\n<<<<<<< SEARCH\n{line}\n=======\n    return -(bins - item)\n>>>>>>> REPLACE\n"

    with pytest.raises(UserError, match="8 expansions in a row made no usable child.*duplicate of node 1"):
        search(tmp_path, instances_file, mock=same_answer)  # a model that only repeats itself trips the breaker
    run = only_run(tmp_path / "runs")
    reasons = [r[0] for r in read(run, "SELECT reason FROM nodes WHERE status = 'invalid'")]
    assert len(reasons) == 8 and all(r.startswith("duplicate of node") for r in reasons)
    assert (
        read(run, "SELECT count(*) FROM evaluations e JOIN nodes n ON n.id = e.node_id WHERE n.status = 'invalid'")[0][
            0
        ]
        == 0
    )


@pytest.mark.slow
def test_a_resumed_run_never_pays_twice_for_an_answer(tmp_path, instances_file):
    """Interrupted while the retry of a bad diff was in flight: the first answer is paid, its child never stored."""
    paid = []

    def interrupted(model, messages, attempt):
        paid.append(messages[-1]["content"][:40])
        if len(paid) == 1:  # the root's first child: a block that does not apply
            return "Change: x.\n<<<<<<< SEARCH\n    return bins * 42\n=======\n    return bins\n>>>>>>> REPLACE\n"
        raise KeyboardInterrupt  # the power goes while the retry is being asked

    assert search(tmp_path, instances_file, mock=interrupted) == 130
    run = only_run(tmp_path / "runs")
    assert read(run, "SELECT count(*) FROM llm_calls")[0][0] == 1
    assert read(run, "SELECT count(*) FROM nodes")[0][0] == 1  # the child was never stored

    resumed_calls = []

    def fine(model, messages, attempt):
        resumed_calls.append(messages)
        return good_diff(messages, len(resumed_calls))

    args = build_parser().parse_args(["--resume", str(run), "--quiet"])
    assert run_from_args(args, llm_mock=fine) == 0
    keys = [k for (k,) in read(run, "SELECT request->>'key' FROM llm_calls ORDER BY id")]
    assert keys.count("parent 0 child 0 attempt 0") == 1  # paid once, reused after the resume
    assert keys[1] == "parent 0 child 0 attempt 1"  # the adopted expansion went on with its retry
    first_child = read(
        run, "SELECT detail->>'key', detail->>'rule' FROM events WHERE kind = 'expand' ORDER BY seq LIMIT 1"
    )
    assert first_child == [("parent 0 child 0", "adopted after resume")]
    assert read(run, "SELECT count(*) FROM evaluations WHERE split = 'dev'")[0][0] == 30


@pytest.mark.slow
def test_the_dollar_budget_stops_after_the_fifth_paid_call(tmp_path, instances_file):
    import litellm

    litellm.register_model(
        {
            "openai/clade-ten-cents": {
                "input_cost_per_token": 0.01,
                "output_cost_per_token": 0.0,
                "litellm_provider": "openai",
                "mode": "chat",
                "max_tokens": 4096,
                "max_input_tokens": 4096,
                "max_output_tokens": 4096,
            }
        }
    )
    calls = []

    def answer(model, messages, attempt):
        calls.append(model)
        return good_diff(messages, len(calls))

    args = build_parser().parse_args(
        [
            "--model",
            "openai/clade-ten-cents",
            "--max-cost",
            "0.5",
            "--budget",
            "200",
            "--workers",
            "2",
            "--llm-concurrency",
            "3",
            "--instances",
            str(instances_file),
            "--run-dir",
            str(tmp_path / "runs"),
            "--quiet",
        ]
    )
    assert run_from_args(args, llm_mock=answer) == 0
    run = only_run(tmp_path / "runs")
    costs = read(run, "SELECT cost_usd FROM llm_calls WHERE error IS NULL")
    assert len(calls) == 5 and len(costs) == 5
    assert sum(c for (c,) in costs) == pytest.approx(0.5)
    assert read(run, "SELECT count(*) FROM evaluations WHERE split = 'dev'")[0][0] < 200  # stopped early, cleanly
    assert read(run, "SELECT status FROM runs")[0][0] == "finished"


@pytest.mark.slow
def test_diagnose_then_implement(tmp_path, instances_file):
    seen = []

    def two_steps(model, messages, attempt):
        text = messages[-1]["content"]
        if "implementation_plan" in text and "SEARCH" not in messages[0]["content"]:
            seen.append("diagnose")
            return (
                '```json\n{"summary": "first fit wastes room", "proposed_improvement": "prefer full bins", '
                '"implementation_plan": "subtract the gap"}\n```'
            )
        seen.append("implement")
        assert "prefer full bins" in text  # the plan reached the implementing call
        return good_diff(messages, len(seen))

    assert search(tmp_path, instances_file, "--meta-steps", "diagnose,implement", mock=two_steps) == 0
    run = only_run(tmp_path / "runs")
    purposes = [p for (p,) in read(run, "SELECT purpose FROM llm_calls ORDER BY id")]
    assert purposes[:4] == ["diagnose", "mutate", "diagnose", "mutate"]
    # each diagnosis is its child's improvement note, and a later review of that lineage reads it
    notes = dict(read(run, "SELECT id, note FROM nodes WHERE note IS NOT NULL"))
    assert notes and all("**Proposed improvement**: prefer full bins" in n for n in notes.values())
    grandchildren = read(
        run, "SELECT c.parent_id FROM nodes c JOIN nodes p ON p.id = c.parent_id WHERE p.note IS NOT NULL ORDER BY c.id"
    )
    assert grandchildren
    noted = grandchildren[0][0]
    reviews = [
        r for (r,) in read(run, f"SELECT request FROM llm_calls WHERE purpose = 'diagnose' AND node_id = {noted}")
    ]
    assert reviews and all(f"### Note on node {noted}" in r for r in reviews)
    # asymmetric information: the implementing call sees the plan and the code, not the results and the lineage
    implement = read(run, "SELECT request FROM llm_calls WHERE purpose = 'mutate' ORDER BY id LIMIT 1")[0][0]
    assert "Diagnosis to implement" in implement and "Results of the parent" not in implement


@pytest.mark.slow
def test_an_ensemble_with_the_bandit_uses_and_credits_each_model(tmp_path, instances_file):
    used = []

    def answer(model, messages, attempt):
        used.append(model)
        return good_diff(messages, len(used))

    assert (
        search(
            tmp_path,
            instances_file,
            "--model",
            "openai/gpt-4o-mini,openai/gpt-4o",
            "--model-choice",
            "bandit",
            mock=answer,
        )
        == 0
    )
    run = only_run(tmp_path / "runs")
    models = {m for (m,) in read(run, "SELECT DISTINCT model FROM nodes WHERE mutator = 'llm'")}
    assert models == {"openai/gpt-4o-mini", "openai/gpt-4o"}  # every arm is tried first
    assert set(used) == models
    by_model = read(run, "SELECT model, count(*) FROM llm_calls GROUP BY model")
    assert len(by_model) == 2
