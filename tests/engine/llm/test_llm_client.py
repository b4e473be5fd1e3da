"""LLMClient through litellm's real acompletion path with its offline answers (mock_response)."""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
from pathlib import Path

import litellm
import pytest
from llm_helpers import MODEL, TEN_CENTS, client, messages, new_archive, rows

from archive.store import Archive
from engine.llm import LLMError, LLMFatalError, build_request

REPO = Path(__file__).resolve().parents[3]


def run(coro):
    return asyncio.run(coro)


def test_mocked_answer_goes_through_litellm_and_is_recorded(tmp_path):
    archive = new_archive(tmp_path)
    llm = client(archive)
    answer = run(llm.complete(messages("hello"), model=MODEL, purpose="mutate", node_id=3, key="k", temperature=0.7))
    assert answer.text == "answer to hello"
    assert (answer.tokens_in, answer.tokens_out) == (10, 20)  # litellm's mock usage
    assert answer.cached is False and answer.model == MODEL
    assert answer.cost_usd is not None and answer.cost_usd > 0  # litellm's own price of gpt-4o-mini
    [(call_id, purpose, model, digest, t_in, t_out, cost, error, response)] = rows(archive)
    assert (call_id, purpose, model, t_in, t_out, error) == (answer.call_id, "mutate", MODEL, 10, 20, None)
    assert cost == pytest.approx(answer.cost_usd)
    assert json.loads(response)["text"] == "answer to hello"
    assert json.loads(response)["finish_reason"] == "stop"
    [(request, node_id)] = archive.query("SELECT request, node_id FROM llm_calls")
    assert node_id == 3
    assert json.loads(request) == {
        "model": MODEL,
        "messages": messages("hello"),
        "params": {"temperature": 0.7},
        "key": "k",
    }
    assert digest == build_request(MODEL, messages("hello"), {"temperature": 0.7}, "k").hash
    spend = llm.spent()
    assert spend.calls == 1 and spend.tokens == 30
    assert spend.by_purpose["mutate"].cost_usd == pytest.approx(answer.cost_usd)
    assert spend.by_model[MODEL].calls == 1


def test_per_call_price_gives_exactly_ten_cents(tmp_path):
    answer = run(
        client(new_archive(tmp_path)).complete(messages(), model=MODEL, purpose="mutate", node_id=None, **TEN_CENTS)
    )
    assert answer.cost_usd == pytest.approx(0.10)


def test_same_request_is_cached_and_a_new_key_calls_again(tmp_path):
    archive = new_archive(tmp_path)
    calls = []
    llm = client(archive, mock=lambda model, msgs, attempt: calls.append(1) or f"sample {len(calls)}")

    async def scenario():
        first = await llm.complete(messages(), model=MODEL, purpose="mutate", node_id=1, key="child 1", **TEN_CENTS)
        again = await llm.complete(messages(), model=MODEL, purpose="mutate", node_id=1, key="child 1", **TEN_CENTS)
        spend_after_cache = llm.spent()
        other = await llm.complete(messages(), model=MODEL, purpose="mutate", node_id=2, key="child 2", **TEN_CENTS)
        return first, again, spend_after_cache, other

    first, again, spend_after_cache, other = run(scenario())
    assert again.cached and not first.cached and not other.cached
    assert again.text == first.text == "sample 1" and again.call_id == first.call_id
    assert spend_after_cache.calls == 1 and spend_after_cache.cost_usd == pytest.approx(0.10)
    assert spend_after_cache.cached == 1
    assert other.text == "sample 2" and other.call_id != first.call_id
    assert len(rows(archive)) == 2 and len(calls) == 2
    assert llm.spent().cost_usd == pytest.approx(0.20)


def test_identical_requests_in_flight_at_once_are_paid_once(tmp_path):
    archive = new_archive(tmp_path)
    llm = client(archive)

    async def scenario():
        return await asyncio.gather(
            *[llm.complete(messages(), model=MODEL, purpose="mutate", node_id=None, key="same") for _ in range(4)]
        )

    answers = run(scenario())
    assert len(rows(archive)) == 1
    assert sorted(a.cached for a in answers) == [False, True, True, True]
    assert len({a.text for a in answers}) == 1


def test_rate_limit_twice_then_success(tmp_path):
    archive = new_archive(tmp_path)
    slept: list[float] = []

    async def sleep(seconds):
        slept.append(seconds)

    def mock(model, msgs, attempt):
        if attempt < 2:
            return litellm.RateLimitError(message="slow down", llm_provider="openai", model=model)
        return "finally"

    llm = client(archive, mock=mock, sleep=sleep, backoff_base_s=0.001, backoff_cap_s=1.0)
    answer = run(llm.complete(messages(), model=MODEL, purpose="mutate", node_id=None))
    assert answer.text == "finally"
    recorded = rows(archive)
    assert [r[7] for r in recorded] == ["RateLimitError: slow down", "RateLimitError: slow down", None]
    assert [r[8] for r in recorded][:2] == [None, None]  # failed rows have no response
    assert archive.llm_answer(recorded[0][3]).id == answer.call_id  # failed rows are never answers
    assert len(slept) == 2
    assert 0.0005 <= slept[0] <= 0.001 and 0.001 <= slept[1] <= 0.002  # exponential, with jitter
    assert llm.spent().total.failed == 2 and llm.spent().calls == 3


def test_transient_errors_exhaust_retries_into_llm_error(tmp_path):
    archive = new_archive(tmp_path)
    slept: list[float] = []

    async def sleep(seconds):
        slept.append(seconds)

    errors = [
        "litellm.InternalServerError",
        litellm.Timeout(message="took too long", llm_provider="openai", model=MODEL),
        litellm.APIConnectionError(message="refused", llm_provider="openai", model=MODEL),
    ]
    llm = client(archive, mock=lambda model, msgs, attempt: errors[attempt], sleep=sleep, max_retries=2)
    with pytest.raises(LLMError) as info:
        run(llm.complete(messages(), model=MODEL, purpose="mutate", node_id=None))
    assert not isinstance(info.value, LLMFatalError)
    assert "after 3 attempts" in str(info.value) and "\n" not in str(info.value)
    assert [r[7].split(":")[0] for r in rows(archive)] == ["InternalServerError", "Timeout", "APIConnectionError"]
    assert len(slept) == 2


def test_authentication_error_is_fatal_at_once(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    archive = new_archive(tmp_path)
    attempts = []

    def mock(model, msgs, attempt):
        attempts.append(attempt)
        return litellm.AuthenticationError(
            message="Incorrect API key provided: sk-...\ntrace", llm_provider="openai", model=model
        )

    with pytest.raises(LLMFatalError) as info:
        run(client(archive, mock=mock).complete(messages(), model=MODEL, purpose="mutate", node_id=None))
    message = str(info.value)
    assert message == f"no valid API key for {MODEL} (Incorrect API key provided: sk-...): set OPENAI_API_KEY"
    assert attempts == [0]
    [row] = rows(archive)
    assert row[7].startswith("AuthenticationError: Incorrect API key")


@pytest.mark.parametrize(
    "error, words",
    [
        (
            lambda m: litellm.NotFoundError(message="The model `gpt-9` does not exist", llm_provider="openai", model=m),
            "not found",
        ),
        ("litellm.ContextWindowExceededError", "context window"),
        (
            lambda m: litellm.BadRequestError(message="unsupported parameter: foo", llm_provider="openai", model=m),
            "rejected the request",
        ),
    ],
)
def test_unknown_model_context_overflow_and_bad_request_are_fatal(tmp_path, error, words):
    attempts = []

    def mock(model, msgs, attempt):
        attempts.append(attempt)
        return error(model) if callable(error) else error

    with pytest.raises(LLMFatalError) as info:
        run(client(new_archive(tmp_path), mock=mock).complete(messages(), model=MODEL, purpose="mutate", node_id=None))
    assert words in str(info.value) and MODEL in str(info.value) and "\n" not in str(info.value)
    assert attempts == [0]


def test_unknown_price_is_tokens_only_said_once(tmp_path, caplog):
    archive = new_archive(tmp_path)
    llm = client(archive, api_base="http://127.0.0.1:9/v1")  # a local server; the mock never reaches it
    with caplog.at_level(logging.WARNING, logger="engine.llm"):
        for key in ("a", "b"):
            answer = run(
                llm.complete(messages(), model="openai/my-local-coder", purpose="mutate", node_id=None, key=key)
            )
            assert answer.cost_usd is None and answer.tokens_in == 10
    said = [r.getMessage() for r in caplog.records if "unknown" in r.getMessage()]
    assert said == ["price of openai/my-local-coder unknown: tokens only"]
    assert [r[6] for r in rows(archive)] == [None, None]
    assert llm.spent().tokens == 60 and llm.spent().cost_usd == 0.0


def test_replay_only_answers_recorded_requests_and_stops_on_others(tmp_path):
    archive = new_archive(tmp_path)
    run(client(archive).complete(messages("recorded"), model=MODEL, purpose="mutate", node_id=None, key="0"))
    archive.close()
    archive = Archive.open(tmp_path / "a.duckdb")

    def no_call(model, msgs, attempt):
        raise AssertionError("replay must not call a model")

    replay = client(archive, mock=no_call, replay_only=True)
    answer = run(replay.complete(messages("recorded"), model=MODEL, purpose="mutate", node_id=None, key="0"))
    assert answer.cached and answer.text == "answer to recorded"
    with pytest.raises(LLMFatalError) as info:
        run(replay.complete(messages("new question"), model=MODEL, purpose="diagnose", node_id=None, key="1"))
    digest = build_request(MODEL, messages("new question"), {}, "1").hash
    assert str(info.value) == (
        f"no recorded answer for request {digest[:12]} (diagnose, {MODEL}); the replayed run diverged from the original"
    )
    assert len(rows(archive)) == 1 and replay.spent().calls == 1


def test_replay_only_answers_a_changed_prompt_by_its_key_when_one_answer_is_recorded_under_it(tmp_path):
    """A replay follows the original's events, not its timing: the prompt may differ, the key says which call."""
    archive = new_archive(tmp_path)
    first = client(archive)
    run(
        first.complete(
            messages("parent code, feedback so far"),
            model=MODEL,
            purpose="mutate",
            node_id=None,
            key="parent 0 child 0 attempt 0",
        )
    )
    for question in ("one", "two"):  # two different answers under one key: no way to tell which
        run(first.complete(messages(question), model=MODEL, purpose="mutate", node_id=None, key="k"))

    replay = client(archive, mock=lambda *a: pytest.fail("replay must not call a model"), replay_only=True)
    answer = run(
        replay.complete(
            messages("parent code, more feedback"),
            model=MODEL,
            purpose="mutate",
            node_id=None,
            key="parent 0 child 0 attempt 0",
        )
    )
    assert answer.cached and answer.text == "answer to parent code, feedback so far"
    with pytest.raises(LLMFatalError, match="diverged"):
        run(replay.complete(messages("three"), model=MODEL, purpose="mutate", node_id=None, key="k"))
    normal = client(archive, mock=lambda model, msgs, attempt: "fresh")  # not a replay: a new prompt is a new call
    assert (
        run(
            normal.complete(
                messages("parent code, more feedback"),
                model=MODEL,
                purpose="mutate",
                node_id=None,
                key="parent 0 child 0 attempt 0",
            )
        ).text
        == "fresh"
    )
    assert len(rows(archive)) == 4


def test_resume_sees_previous_spend_and_answers(tmp_path):
    archive = new_archive(tmp_path)
    first = client(archive)

    async def before():
        for key in ("0", "1", "2"):
            await first.complete(messages(), model=MODEL, purpose="mutate", node_id=None, key=key, **TEN_CENTS)
        await first.complete(messages("why"), model=MODEL, purpose="diagnose", node_id=None, **TEN_CENTS)

    run(before())
    archive.close()
    archive = Archive.open(tmp_path / "a.duckdb")
    resumed = client(archive, max_cost_usd=0.50)
    spend = resumed.spent()
    assert spend.calls == 4 and spend.cost_usd == pytest.approx(0.40) and spend.tokens == 120
    assert spend.by_purpose["mutate"].calls == 3 and spend.by_purpose["diagnose"].calls == 1

    async def after():
        again = await resumed.complete(messages(), model=MODEL, purpose="mutate", node_id=None, key="1", **TEN_CENTS)
        new = await resumed.complete(messages(), model=MODEL, purpose="mutate", node_id=None, key="3", **TEN_CENTS)
        return again, new

    again, new = run(after())
    assert again.cached and not new.cached
    assert len(rows(archive)) == 5
    from engine.llm import BudgetExceeded

    with pytest.raises(BudgetExceeded):  # the resumed run counts the $0.40 spent before it
        run(resumed.complete(messages(), model=MODEL, purpose="mutate", node_id=None, key="4", **TEN_CENTS))
    # a recorded answer is free: it is served even with the budget spent
    assert run(resumed.complete(messages(), model=MODEL, purpose="mutate", node_id=None, key="0", **TEN_CENTS)).cached


def test_api_base_and_params_reach_litellm(tmp_path, monkeypatch):
    seen = {}
    real = litellm.acompletion

    async def spy(**kwargs):
        seen.update(kwargs)
        return await real(**kwargs)

    monkeypatch.setattr(litellm, "acompletion", spy)
    llm = client(new_archive(tmp_path), api_base="http://127.0.0.1:8080/v1", timeout_s=7.0)
    run(
        llm.complete(
            messages(), model="openai/qwen2.5-coder", purpose="mutate", node_id=None, temperature=0.2, max_tokens=512
        )
    )
    assert seen["api_base"] == "http://127.0.0.1:8080/v1" and seen["timeout"] == 7.0
    assert seen["temperature"] == 0.2 and seen["max_tokens"] == 512
    assert seen["num_retries"] == 0 and seen["max_retries"] == 0


def test_client_params_are_refused_per_call(tmp_path):
    with pytest.raises(ValueError, match="api_base"):
        run(client(new_archive(tmp_path)).complete(messages(), model=MODEL, purpose="m", node_id=None, api_base="x"))


def test_importing_engine_llm_does_not_import_litellm():
    code = (
        "import sys, engine.llm; from engine.llm import LLMClient, LLMSettings; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('litellm', 'openai')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=False, cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
