"""Request hashing: what makes two requests the same answer, and what is stored."""

from __future__ import annotations

import asyncio

import pytest
from llm_helpers import MODEL, client, messages, new_archive, rows

from engine.llm import LLMSettings, build_request


def test_hash_covers_model_messages_answer_params_and_key():
    base = build_request(MODEL, messages(), {"temperature": 0.7, "max_tokens": 100}, "child 1")
    same = build_request(
        MODEL, list(reversed(list(reversed(messages())))), {"max_tokens": 100, "temperature": 0.7}, "child 1"
    )
    assert base.hash == same.hash and len(base.hash) == 64
    changed = [
        build_request("openai/gpt-4o", messages(), {"temperature": 0.7, "max_tokens": 100}, "child 1"),
        build_request(MODEL, messages("other"), {"temperature": 0.7, "max_tokens": 100}, "child 1"),
        build_request(MODEL, messages(), {"temperature": 0.2, "max_tokens": 100}, "child 1"),
        build_request(MODEL, messages(), {"temperature": 0.7, "max_tokens": 100, "seed": 3}, "child 1"),
        build_request(MODEL, messages(), {"temperature": 0.7, "max_tokens": 100}, "child 2"),
    ]
    assert len({base.hash, *(r.hash for r in changed)}) == 6


def test_transport_params_are_neither_hashed_nor_stored():
    plain = build_request(MODEL, messages(), {"temperature": 0.7}, "k")
    keyed = build_request(
        MODEL,
        messages(),
        {"temperature": 0.7, "api_key": "sk-secret", "metadata": {"a": 1}, "input_cost_per_token": 0.01, "top_p": None},
        "k",
    )
    assert keyed.hash == plain.hash
    assert "sk-secret" not in str(keyed.record) and keyed.transport_params["api_key"] == "sk-secret"
    assert keyed.record == {"model": MODEL, "messages": messages(), "params": {"temperature": 0.7}, "key": "k"}


def test_later_changes_to_the_callers_messages_do_not_leak_in():
    msgs = messages()
    request = build_request(MODEL, msgs, {}, "")
    msgs[-1]["content"] = "changed"
    assert request.messages[-1]["content"] == "improve this agent"


@pytest.mark.parametrize("param", ["api_base", "timeout", "mock_response", "stream", "num_retries"])
def test_client_owned_params_are_refused(param):
    with pytest.raises(ValueError, match=param):
        build_request(MODEL, messages(), {param: 1}, "")


def test_settings_validate_and_backoff_is_capped():
    with pytest.raises(ValueError):
        LLMSettings(max_retries=-1)
    settings = LLMSettings(backoff_base_s=1.0, backoff_cap_s=8.0)
    assert [settings.backoff_s(a, 0.0) for a in range(5)] == [0.5, 1.0, 2.0, 4.0, 4.0]
    assert [settings.backoff_s(a, 0.999) for a in range(5)][-1] < 8.0


def test_a_cancelled_call_frees_its_reservation_and_writes_nothing(tmp_path):
    archive = new_archive(tmp_path)
    llm = client(archive, max_cost_usd=1.0)

    async def scenario():
        task = asyncio.ensure_future(
            llm.complete(messages(), model=MODEL, purpose="mutate", node_id=None, key="k", mock_delay=5.0)
        )
        await asyncio.sleep(0.2)
        assert llm.budget.in_flight == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert llm.budget.in_flight == 0
        return await asyncio.wait_for(llm.complete(messages(), model=MODEL, purpose="mutate", node_id=None, key="k"), 5)

    answer = asyncio.run(scenario())
    assert not answer.cached and len(rows(archive)) == 1
