"""One request as the archive sees it: canonical JSON and its hash (the replay-cache key).

The hash covers the model, the messages, every parameter that can change the
answer (temperature, max_tokens, response_format, tools, ... : all parameters
except the transport and pricing ones listed in TRANSPORT_PARAMS) and the
caller's `key`. The key makes otherwise identical requests distinct ("child
17, attempt 0" vs "child 18, attempt 0"), so that different samples are not
collapsed into one, while a resumed or replayed run asking the same thing
again finds the recorded answer.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# Passed to litellm, but neither hashed nor stored: they change how or where a request is sent,
# or what it is priced at, not what the model answers (api_key is a secret and is never stored).
TRANSPORT_PARAMS = frozenset(
    {
        "api_key",
        "api_version",
        "organization",
        "metadata",
        "extra_headers",
        "headers",
        "drop_params",
        "input_cost_per_token",
        "output_cost_per_token",
        "input_cost_per_second",
        "output_cost_per_second",
        "mock_delay",  # litellm's offline answers: how long the fake call takes
    }
)

# Set by the client from LLMSettings (or its mock); a caller passing them is a programming error.
CLIENT_PARAMS = frozenset(
    {
        "api_base",
        "base_url",
        "timeout",
        "request_timeout",
        "num_retries",
        "max_retries",
        "mock_response",
        "mock_timeout",
        "stream",
        "acompletion",
    }
)


def canonical_json(value: Any) -> str:
    """Deterministic JSON: sorted keys, no spaces, non-ASCII kept. Raises TypeError on non-JSON values."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


@dataclass(frozen=True)
class LLMRequest:
    model: str
    messages: list[dict]
    answer_params: dict  # hashed and stored
    transport_params: dict  # passed to litellm only
    key: str
    hash: str  # sha256 hex of canonical_json(record)

    @property
    def record(self) -> dict:
        """What the `request` column stores: model, messages, answer params, key."""
        return {"model": self.model, "messages": self.messages, "params": self.answer_params, "key": self.key}


def build_request(
    model: str, messages: Sequence[Mapping[str, Any]], params: Mapping[str, Any], key: str = ""
) -> LLMRequest:
    if not model:
        raise ValueError("a model is required (provider/name, e.g. openai/gpt-4o-mini)")
    reserved = sorted(CLIENT_PARAMS.intersection(params))
    if reserved:
        raise ValueError(f"{', '.join(reserved)}: set through LLMSettings or the client's mock, not per call")
    answer = {k: v for k, v in params.items() if k not in TRANSPORT_PARAMS and v is not None}
    transport = {k: v for k, v in params.items() if k in TRANSPORT_PARAMS}
    body = {"model": model, "messages": [dict(m) for m in messages], "params": answer, "key": str(key)}
    text = canonical_json(body)
    frozen = json.loads(text)  # a private copy: later changes to the caller's messages do not leak in
    return LLMRequest(
        model=model,
        messages=frozen["messages"],
        answer_params=frozen["params"],
        transport_params=transport,
        key=str(key),
        hash=hashlib.sha256(text.encode("utf-8")).hexdigest(),
    )
