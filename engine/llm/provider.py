"""The litellm boundary: import it (lazily), make one completion, read text, usage and price.

Nothing else in Clade imports litellm. `load_litellm` sets
LITELLM_LOCAL_MODEL_COST_MAP (so litellm reads its bundled price map instead
of fetching one) and silences litellm's "Give Feedback" banner on errors.

Offline answers go through litellm's own code path: `mock_response` is passed
to `litellm.acompletion`, which builds a real ModelResponse (usage 10 tokens
in, 20 out) or raises. A litellm exception instance (litellm.RateLimitError,
AuthenticationError, ...: they subclass openai.APIError) is raised as it is;
another Exception becomes an InternalServerError with its status_code (500 by
default); the strings "litellm.RateLimitError", "litellm.InternalServerError"
and "litellm.ContextWindowExceededError" raise those errors.
"""

from __future__ import annotations

import asyncio
import logging
import os
import warnings
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

NO_MOCK = object()  # no offline answer: call the provider for real
TIMEOUT_GRACE_S = 10.0  # an attempt litellm has not ended this long after its timeout is abandoned


def load_litellm():
    """litellm, imported on first use; UserError (one line naming the extra) where it is not installed."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import litellm
    except ModuleNotFoundError as exc:
        if exc.name != "litellm":
            raise
        from engine.errors import UserError
        from engine.install import install_extra

        raise UserError(f"a model is called through litellm, which is not installed: {install_extra('llm')}") from None

    litellm.suppress_debug_info = True
    # A call cancelled (time limit, breaker, Ctrl-C) just after litellm's worker thread built the provider's
    # coroutine leaves that coroutine unawaited inside litellm; the warning says nothing a user can act on.
    # (An identical filter replaces itself, so repeated loads do not pile them up.)
    warnings.filterwarnings(
        "ignore", message=r"coroutine '\w+\.a?completion' was never awaited", category=RuntimeWarning
    )
    return litellm


@dataclass(frozen=True)
class Reply:
    text: str
    finish_reason: str | None
    tokens_in: int
    tokens_out: int
    cost_usd: float | None
    response_model: str | None

    def record(self) -> dict:
        """What the `response` column stores."""
        return {
            "text": self.text,
            "finish_reason": self.finish_reason,
            "model": self.response_model,
            "usage": {"prompt_tokens": self.tokens_in, "completion_tokens": self.tokens_out},
        }


async def acomplete(
    model: str,
    messages: list[dict],
    params: dict[str, Any],
    *,
    api_base: str | None,
    timeout_s: float,
    mock_response: Any = NO_MOCK,
    unpriced: set[str] | None = None,
    api_key: str | None = None,
) -> Reply:
    """One attempt through `litellm.acompletion` (litellm's and the OpenAI SDK's own retries off).
    Raises what litellm raises; an attempt that outlives its timeout raises TimeoutError."""
    litellm = load_litellm()
    kwargs: dict[str, Any] = dict(params)
    kwargs.update(model=model, messages=messages, timeout=timeout_s, num_retries=0, max_retries=0)
    if api_base:
        kwargs["api_base"] = api_base
    if api_key and "api_key" not in kwargs:
        kwargs["api_key"] = api_key
    if mock_response is not NO_MOCK:
        kwargs["mock_response"] = mock_response
    response = await asyncio.wait_for(litellm.acompletion(**kwargs), timeout_s + TIMEOUT_GRACE_S)
    choice = response.choices[0]
    text = getattr(choice.message, "content", None) or ""
    tokens_in, tokens_out = _usage(litellm, response, model, messages, text)
    return Reply(
        text=text,
        finish_reason=getattr(choice, "finish_reason", None),
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        cost_usd=price(litellm, response, model, unpriced),
        response_model=getattr(response, "model", None),
    )


def _usage(litellm, response, model: str, messages: list[dict], text: str) -> tuple[int, int]:
    """Tokens from the response's usage; counted by litellm when a server sends none."""
    usage = getattr(response, "usage", None)
    tokens_in = getattr(usage, "prompt_tokens", None) if usage is not None else None
    tokens_out = getattr(usage, "completion_tokens", None) if usage is not None else None
    if tokens_in is None or tokens_out is None:
        try:
            tokens_in = litellm.token_counter(model=model, messages=messages) if tokens_in is None else tokens_in
            tokens_out = litellm.token_counter(model=model, text=text) if tokens_out is None else tokens_out
        except Exception:  # noqa: BLE001 - no count: tokens stay as the server sent them
            tokens_in, tokens_out = tokens_in or 0, tokens_out or 0
    return int(tokens_in), int(tokens_out)


def price(litellm, response, model: str, unpriced: set[str] | None = None) -> float | None:
    """Dollars of one call; None (said once per model) when litellm has no price.

    litellm prices each call as it ends (`_hidden_params["response_cost"]`), per-call prices such as
    `input_cost_per_token` included; `completion_cost` on the response alone ignores those in recent
    litellm versions, so it is only the fallback."""
    hidden = getattr(response, "_hidden_params", None) or {}
    cost = hidden.get("response_cost") if isinstance(hidden, dict) else None
    if not isinstance(cost, (int, float)) or not cost > 0.0:
        try:
            cost = float(litellm.completion_cost(completion_response=response))
        except Exception:  # noqa: BLE001 - litellm raises many kinds for "no price"
            cost = 0.0
    if cost > 0.0:
        return float(cost)
    if unpriced is not None and model not in unpriced:
        unpriced.add(model)
        log.warning("price of %s unknown: tokens only", model)
    return None
