"""One embedding attempt through litellm, and how its vectors are kept in an `llm_calls` row.

The row's `response` holds the vectors (float32, base64: ~5.5 bytes a
dimension instead of ~20 in JSON) so that a resumed or replayed run reads
them back instead of paying again, and decides novelty as the original did.
"""

from __future__ import annotations

import asyncio
import base64
from dataclasses import dataclass
from typing import Any

from engine.llm import provider


@dataclass(frozen=True)
class EmbedReply:
    vectors: list[list[float]]
    tokens_in: int
    cost_usd: float | None
    response_model: str | None
    tokens_out: int = 0

    def record(self) -> dict:
        """What the `response` column stores."""
        return {
            "model": self.response_model,
            "usage": {"prompt_tokens": self.tokens_in, "completion_tokens": 0},
            "dims": len(self.vectors[0]) if self.vectors else 0,
            "vectors_f32_b64": [_pack(v) for v in self.vectors],
        }


def vectors(response: dict | None) -> list[list[float]]:
    """The vectors of a recorded embed row."""
    return [_unpack(text) for text in (response or {}).get("vectors_f32_b64", [])]


async def aembed(
    model: str,
    texts: list[str],
    *,
    api_base: str | None,
    api_key: str | None,
    timeout_s: float,
    unpriced: set[str] | None = None,
) -> EmbedReply:
    """One attempt through `litellm.aembedding` (retries off); raises what litellm raises."""
    litellm = provider.load_litellm()
    kwargs: dict[str, Any] = dict(model=model, input=list(texts), timeout=timeout_s, num_retries=0, max_retries=0)
    if api_base:
        kwargs["api_base"] = api_base
    if api_key:
        kwargs["api_key"] = api_key
    response = await asyncio.wait_for(litellm.aembedding(**kwargs), timeout_s + provider.TIMEOUT_GRACE_S)
    rows = sorted(response.data, key=lambda item: _field(item, "index") or 0)
    found = [list(map(float, _field(item, "embedding"))) for item in rows]
    if len(found) != len(texts):
        raise ValueError(f"{model} returned {len(found)} embeddings for {len(texts)} texts")
    usage = getattr(response, "usage", None)
    tokens = getattr(usage, "prompt_tokens", None) if usage is not None else None
    if tokens is None:
        tokens = sum(max(1, len(text) // 4) for text in texts)  # no usage sent: about 4 characters a token
    return EmbedReply(
        vectors=found,
        tokens_in=int(tokens),
        cost_usd=provider.price(litellm, response, model, unpriced),
        response_model=getattr(response, "model", None),
    )


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, dict) else getattr(item, name, None)


def _pack(vector: list[float]) -> str:
    import numpy as np

    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def _unpack(text: str) -> list[float]:
    import numpy as np

    return np.frombuffer(base64.b64decode(text), dtype="<f4").astype(float).tolist()
