"""What the installed litellm really raises, classified: a real HTTP server on loopback, and the preflight.

Every error here is made by litellm itself (its OpenAI provider, talking to
tests/engine/llm/openai_stub.py over real HTTP, or failing before it sends
anything), never by a patched function.
"""

from __future__ import annotations

import asyncio
import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest

from engine.llm import LLMClient, LLMError, LLMFatalError, LLMSettings
from engine.llm.preflight import KNOWN_KEYS, check_models, missing_keys, probe
from tests.engine.llm.llm_helpers import messages, new_archive, rows
from tests.engine.llm.openai_stub import BAD_KEY, Answer, Fail, Hang, OpenAIStub

KEY_VARIABLES = sorted({name for names in KNOWN_KEYS.values() for name in names})


def run(coro):
    return asyncio.run(coro)


@pytest.fixture
def no_keys(monkeypatch):
    for name in KEY_VARIABLES + ["COHERE_API_KEY"]:
        monkeypatch.delenv(name, raising=False)


def real_client(archive, url: str | None, **settings) -> LLMClient:
    """A client with no mock: every call is litellm's own, to `url`."""
    settings.setdefault("backoff_base_s", 0.0)
    return LLMClient(archive, LLMSettings(api_base=url, **settings))


@pytest.mark.parametrize("provider", sorted(KNOWN_KEYS))
def test_the_fast_key_table_agrees_with_litellm(provider, no_keys):
    assert missing_keys(f"{provider}/some-model") == list(KNOWN_KEYS[provider])


def test_a_missing_key_is_named_before_anything_runs(no_keys, monkeypatch):
    said = check_models(["openai/gpt-4o-mini"], None)
    assert said.startswith("no API key for openai/gpt-4o-mini: set OPENAI_API_KEY")
    assert "COHERE_API_KEY" in check_models(["cohere/command-r"], None)  # a provider outside the fast table
    assert "GOOGLE_API_KEY or GEMINI_API_KEY" in check_models(["gemini/gemini-2.0-flash"], None)
    assert check_models(["openai/local-model"], "http://127.0.0.1:9/v1") is None  # a server given: no key needed
    assert "no provider" in check_models(["nosuchprovider/model"], None)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert check_models(["openai/gpt-4o-mini"], None) is None


def test_litellm_reports_a_missing_openai_key_as_a_500_and_it_is_still_fatal(tmp_path, no_keys):
    """The installed litellm raises InternalServerError ("Missing credentials ...") for a missing OpenAI key:
    retrying would loop for ever; the client stops at the first attempt and names the variable."""
    archive = new_archive(tmp_path)
    with pytest.raises(LLMFatalError) as info:
        run(real_client(archive, None).complete(messages(), model="openai/gpt-4o-mini", purpose="mutate", node_id=None))
    assert "OPENAI_API_KEY" in str(info.value) and "\n" not in str(info.value)
    [row] = rows(archive)
    assert row[7].startswith("InternalServerError") and "Missing credentials" in row[7]


@pytest.mark.parametrize(
    "reply, fatal, words",
    [
        (BAD_KEY, True, "no valid API key"),
        (
            Fail(
                429,
                "You exceeded your current quota, please check your plan and billing details.",
                "insufficient_quota",
                "insufficient_quota",
            ),
            True,
            "out of credit",
        ),
        (Fail(500, "Missing credentials. Please pass an `api_key`"), True, "no valid API key"),
        (Fail(429, "Rate limit reached for requests", "requests", "rate_limit_exceeded"), False, "RateLimitError"),
        (Fail(500, "upstream exploded"), False, "InternalServerError"),
        (Fail(503, "overloaded"), False, "ServiceUnavailableError"),
    ],
)
def test_errors_from_a_real_server_are_classified_by_what_they_say(tmp_path, reply, fatal, words):
    archive = new_archive(tmp_path)
    with OpenAIStub(lambda body, n: reply) as stub:
        llm = real_client(archive, stub.url, api_key="sk-test", max_retries=2)
        with pytest.raises(LLMError) as info:
            run(llm.complete(messages(), model="openai/stub", purpose="mutate", node_id=None))
        asked = len(stub.chat_requests())
    assert isinstance(info.value, LLMFatalError) == fatal
    assert words in str(info.value) and "\n" not in str(info.value)
    assert asked == (1 if fatal else 3)  # fatal at once; transient ones retried
    assert len(rows(archive)) == asked


def test_a_hanging_server_times_out_and_is_retried(tmp_path):
    archive = new_archive(tmp_path)
    with OpenAIStub(lambda body, n: Hang() if n == 0 else Answer("fine")) as stub:
        answer = run(
            real_client(archive, stub.url, api_key="sk-test", timeout_s=1.0).complete(
                messages(), model="openai/stub", purpose="mutate", node_id=None
            )
        )
    assert answer.text == "fine"
    first, second = rows(archive)
    assert first[7].startswith(("Timeout", "TimeoutError")) and second[7] is None


def test_the_probe_is_one_booked_call(tmp_path):
    archive = new_archive(tmp_path)
    with OpenAIStub(lambda body, n: Answer("OK")) as stub:
        llm = real_client(archive, stub.url, api_key="sk-test")
        run(probe(llm, "openai/stub", 0))
        run(probe(llm, "openai/stub", 1))  # a later start probes again: never an answer from the archive
        assert len(stub.chat_requests()) == 2
        assert stub.chat_requests()[0]["max_tokens"] == 5
    assert archive.query("SELECT purpose, error FROM llm_calls ORDER BY id") == [("probe", None), ("probe", None)]


def test_the_probe_of_a_server_that_fails_gives_up_after_one_retry(tmp_path):
    archive = new_archive(tmp_path)
    with OpenAIStub(lambda body, n: Fail(500, "boom")) as stub:
        with pytest.raises(LLMError, match="boom"):
            run(probe(real_client(archive, stub.url, api_key="sk-test"), "openai/stub", 0))
        assert len(stub.chat_requests()) == 2
