"""The public records of the LLM client: its settings, one call's own limits and the answer of one call."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LLMAnswer:
    """What `LLMClient.complete` returns."""

    text: str
    model: str  # the model as the caller named it (e.g. "openai/gpt-4o-mini")
    tokens_in: int
    tokens_out: int
    cost_usd: float | None  # None when litellm does not know the model's price
    latency_s: float
    call_id: int  # id of the llm_calls row that holds this answer
    cached: bool  # answered from the archive (replay, resume, a repeated request): no new spend


@dataclass(frozen=True)
class CallLimits:
    """One call's own retries and timeout, overriding the settings' (a probe gives up sooner)."""

    retries: int | None = None  # retries after the first attempt; None: the settings' max_retries
    timeout_s: float | None = None  # per attempt; None: the settings' timeout_s


@dataclass(frozen=True)
class LLMSettings:
    """How the client calls models and how much it may spend.

    Retries (rate limits, server errors, timeouts, connection errors) sleep
    `min(backoff_cap_s, backoff_base_s * 2**attempt)`, the upper half of it
    drawn at random from the client's seeded source ("equal jitter").
    """

    api_base: str | None = None  # a local server: "http://127.0.0.1:8080/v1" with model "openai/<name>"
    api_key: str | None = None  # sent instead of the provider's key variable (never stored): a local server's
    max_retries: int = 4  # retries after the first attempt, on transient errors only
    timeout_s: float = 120.0  # per attempt
    max_cost_usd: float | None = None
    max_tokens_total: int | None = None  # tokens in + out, over the whole run
    replay_only: bool = False  # answer only from the archive; never call a model
    backoff_base_s: float = 1.0
    backoff_cap_s: float = 30.0

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, not {self.max_retries}")
        if self.timeout_s <= 0:
            raise ValueError(f"timeout_s must be > 0, not {self.timeout_s}")
        if self.max_cost_usd is not None and self.max_cost_usd < 0:
            raise ValueError(f"max_cost_usd must be >= 0, not {self.max_cost_usd}")
        if self.max_tokens_total is not None and self.max_tokens_total < 0:
            raise ValueError(f"max_tokens_total must be >= 0, not {self.max_tokens_total}")
        if self.backoff_base_s < 0 or self.backoff_cap_s < 0:
            raise ValueError("backoff_base_s and backoff_cap_s must be >= 0")

    def backoff_s(self, attempt: int, uniform: float) -> float:
        """The sleep before retry number `attempt + 1`; `uniform` is a draw in [0, 1)."""
        ceiling = min(self.backoff_cap_s, self.backoff_base_s * (2.0**attempt))
        return ceiling / 2.0 + uniform * ceiling / 2.0
