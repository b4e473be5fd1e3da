"""Shared helpers of the LLM client tests: a real archive and litellm's own offline answers."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from archive.store import Archive
from engine.llm import LLMClient, LLMSettings

MODEL = "openai/gpt-4o-mini"
# litellm's mock answers report 10 prompt tokens and 20 completion tokens: at these per-call prices
# (litellm's own input_cost_per_token / output_cost_per_token) one call costs exactly $0.10.
TEN_CENTS = {"input_cost_per_token": 0.01, "output_cost_per_token": 0.0}
MOCK_TOKENS = 30


def messages(text: str = "improve this agent") -> list[dict]:
    return [{"role": "system", "content": "You are a meta-agent."}, {"role": "user", "content": text}]


def new_archive(tmp_path, name: str = "a.duckdb") -> Archive:
    return Archive.create(tmp_path / name, "r", {}, seed=0)


def client(archive, mock=None, sleep=None, **settings) -> LLMClient:
    settings.setdefault("backoff_base_s", 0.0)
    kwargs = {"mock": mock if mock is not None else (lambda model, msgs, attempt: f"answer to {msgs[-1]['content']}")}
    if sleep is not None:
        kwargs["sleep"] = sleep
    return LLMClient(archive, LLMSettings(**settings), **kwargs)


def rows(archive) -> list[tuple]:
    return archive.query(
        "SELECT id, purpose, model, request_hash, tokens_in, tokens_out, cost_usd, error, response "
        "FROM llm_calls ORDER BY id"
    )
