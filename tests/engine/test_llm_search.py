"""Whole searches with the LLM mutator, driven through litellm's own offline answers (`mock_response`)."""
from __future__ import annotations

import os
import re

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import duckdb
import pytest

from engine.cli import build_parser
from engine.errors import UserError
from engine.run import run_from_args
from tests.engine.test_search_e2e import only_run, read

MODEL = "openai/gpt-4o-mini"
PARENT = re.compile(r"# Current code \(the parent\)\nagent\.py\n```python\n(.*?)\n```", re.S)


def parent_return_line(messages: list[dict]) -> str:
    code = PARENT.search(messages[1]["content"]).group(1)
    return [line for line in code.splitlines() if line.strip().startswith("return ")][-1]


def good_diff(messages: list[dict], k: int) -> str:
    line = parent_return_line(messages)
    expression = line.strip()[len("return "):]
    return (f"Change: add a best-fit term, weight {k}.\n\nagent.py\n<<<<<<< SEARCH\n{line}\n=======\n"
            f"    return ({expression}) - {0.1 * (k + 1):.1f} * (bins - item)\n>>>>>>> REPLACE\n")


class ScriptedModel:
    """Answers by call number: each kind of answer a real model gives, in turn, then good diffs."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, model, messages, attempt):
        import litellm

        k = self.calls
        self.calls += 1
        script = {
            1: "Change: tweak.\n\nagent.py\n<<<<<<< SEARCH\n    return bins * 42\n=======\n    return bins\n>>>>>>> REPLACE\n",
            3: "I would make the priority prefer fuller bins, but I will not write code.",
            5: "Change: broken.\n\nagent.py\n<<<<<<< SEARCH\n" + parent_return_line(messages)
               + "\n=======\n    return -(bins - item\n>>>>>>> REPLACE\n",
            6: litellm.RateLimitError(message="slow down", llm_provider="openai", model=model),
        }
        return script.get(k, None) or good_diff(messages, k)


def search(tmp_path, instances_file, *extra: str, mock=None, runs="runs"):
    args = build_parser().parse_args(
        ["--model", MODEL, "--budget", "30", "--workers", "1", "--seed", "2", "--instances", str(instances_file),
         "--run-dir", str(tmp_path / runs), "--quiet", *extra])
    return run_from_args(args, llm_mock=mock)


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


def test_replay_gives_the_same_tree_at_no_cost(tmp_path, instances_file):
    assert search(tmp_path, instances_file, mock=ScriptedModel()) == 0
    original = only_run(tmp_path / "runs")
    args = build_parser().parse_args(["--replay", str(original), "--run-dir", str(tmp_path / "replayed"), "--quiet"])
    assert run_from_args(args) == 0  # no mock: any call not in the archive would fail
    replayed = only_run(tmp_path / "replayed")
    tree = "SELECT id, parent_id, status, code_hash FROM nodes ORDER BY id"
    assert read(replayed, tree) == read(original, tree)
    assert read(replayed, "SELECT count(*) FROM llm_calls")[0][0] == 0


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

    assert search(tmp_path, instances_file, mock=same_answer) == 0
    run = only_run(tmp_path / "runs")
    reasons = [r[0] for r in read(run, "SELECT reason FROM nodes WHERE status = 'invalid'")]
    assert reasons and all(r.startswith("duplicate of node") for r in reasons)
    assert read(run, "SELECT count(*) FROM evaluations e JOIN nodes n ON n.id = e.node_id "
                     "WHERE n.status = 'invalid'")[0][0] == 0
