"""LLMClient: cache, budget, retries and records around one model call.

`complete` does, in order:
1. builds the request and its hash (engine.llm.request);
2. waits for an identical request already in flight, so that it is paid once;
3. answers from the archive when a successful call with this hash is recorded
   (`cached=True`, no row written, nothing spent): this is `--replay` and the
   guarantee that a resumed run never pays twice for a call that had returned;
   with `replay_only`, a request whose hash is not recorded is answered by its
   caller's key (the one answer recorded under it), else it is an LLMFatalError;
4. asks the budget for room (engine.llm.budget: BudgetExceeded when spent);
5. calls litellm, retrying transient errors (rate limit, 5xx, timeout, lost
   connection) with exponential backoff and seeded jitter; authentication
   errors, unknown models, context-window overflow and other rejected
   requests raise LLMFatalError at once, anything else LLMError.

`embed` (vectors through litellm.aembedding, engine.llm.embed) goes through
the same cache, budget, retries and rows, with purpose 'embed'.

Rows: every attempt is one row of `llm_calls`, written as soon as it returns:
the successful one with its response, tokens and dollars; each failed attempt
with `error` = "<ExceptionType>: <first line>", no response, 0 tokens and no
cost (a failed call is not billed). Failed rows are never served as answers.
The client is the only writer of llm_calls and keeps no state the archive
does not have: a new client on a reopened archive sees the same spend and the
same recorded answers.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from archive.records import LLMCallRecord
from engine.llm import provider
from engine.llm.budget import Budget
from engine.llm.errors import (
    FATAL,
    RETRY,
    LLMError,
    LLMFatalError,
    classify,
    error_text,
)
from engine.llm.records import CallLimits, LLMAnswer, LLMSettings
from engine.llm.request import LLMRequest, build_request
from engine.llm.spend import Spend, SpendTally


@dataclass(frozen=True)
class _Caller:
    """What a call is made for, stored on each of its rows."""

    purpose: str
    node_id: int | None
    instance_id: str | None = None  # the instance an agent's call is made for (the gateway's calls)


Mock = Callable[[str, list, int], Any]  # (model, messages, attempt) -> mock_response for litellm, or None


class LLMClient:
    def __init__(
        self,
        archive,
        settings: LLMSettings | None = None,
        *,
        mock: Mock | None = None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        """`mock(model, messages, attempt)` returns what litellm gets as `mock_response` (a string answer, or an
        exception instance litellm raises); returning None makes a real call. `rng` draws the backoff jitter."""
        self.archive = archive
        self.settings = settings or LLMSettings()
        self._mock = mock
        self._sleep = sleep
        self._rng = rng or random.Random(0)
        self._tally = SpendTally.from_archive(archive)
        self._budget = Budget.from_archive(archive, self.settings.max_cost_usd, self.settings.max_tokens_total)
        self._in_flight: dict[str, asyncio.Event] = {}
        self._unpriced: set[str] = set()
        # told of every call as its row is written, (ok, error): the run's breaker and progress line listen
        self.observer: Callable[[bool, str | None], None] | None = None

    def spent(self) -> Spend:
        """Dollars, tokens and calls so far (before a resume too), per purpose and per model."""
        return self._tally.snapshot()

    @property
    def budget(self) -> Budget:
        return self._budget

    async def complete(
        self,
        messages: list[dict],
        *,
        model: str,
        purpose: str,
        node_id: int | None,
        key: str = "",
        instance_id: str | None = None,
        limits: CallLimits | None = None,
        **params: Any,
    ) -> LLMAnswer:
        """`instance_id`: the instance an agent's call is made for (the gateway's calls); stored on its rows.
        `limits`: this call's retries and timeout, overriding the settings' (a probe gives up sooner)."""
        request = build_request(model, messages, params, key)
        while (other := self._in_flight.get(request.hash)) is not None:
            await other.wait()
        done = asyncio.Event()
        self._in_flight[request.hash] = done
        try:
            return await self._complete(request, _Caller(purpose, node_id, instance_id), limits or CallLimits())
        finally:
            del self._in_flight[request.hash]
            done.set()

    def book_given(
        self,
        messages: list[dict],
        text: str,
        *,
        model: str,
        purpose: str,
        node_id: int | None,
        key: str,
        latency_s: float,
    ) -> LLMAnswer:
        """An answer that came from elsewhere than a model (a person's: engine/mutators/human.py), booked as a
        call like any other: one llm_calls row with the request and `text`, 0 tokens, cost 0. A replay and a
        resumed run then find it by its hash or key, as they find a model's."""
        request = build_request(model, messages, {}, key)
        reply = provider.Reply(text, "stop", 0, 0, 0.0, model)
        call_id = self._write(request, _Caller(purpose, node_id), latency_s, reply=reply)
        return LLMAnswer(text, model, 0, 0, 0.0, latency_s, call_id, cached=False)

    async def _complete(self, request: LLMRequest, caller: _Caller, limits: CallLimits) -> LLMAnswer:
        recorded = self.archive.llm_answer(request.hash)
        if recorded is None and self.settings.replay_only and request.key:
            # a replay follows the original's events, not its timing: a prompt may show feedback that had not
            # arrived when the original asked, yet it is the same question (same parent, same key)
            recorded = self.archive.llm_answer_for_key(request.key)
        if recorded is not None:
            self._tally.add_cached()
            return _answer_from(recorded)
        if self.settings.replay_only:
            raise LLMFatalError(
                f"no recorded answer for request {request.hash[:12]} ({caller.purpose}, {request.model}); "
                "the replayed run diverged from the original"
            )
        reservation = await self._budget.admit(request.model)
        observed = None
        try:
            answer = await self._call_with_retries(request, caller, limits)
            observed = (answer.cost_usd, answer.tokens_in + answer.tokens_out)
            return answer
        finally:
            self._budget.release(reservation, observed)

    async def embed(self, texts: list[str], *, model: str, node_id: int | None) -> list[list[float]]:
        """One vector per text, through `litellm.aembedding`; booked like `complete` (rows of purpose 'embed',
        budget, retries) and answered from the archive when the same texts were embedded before (the row keeps
        the vectors). The client's `mock` is for completions only: embeddings go to the provider or api_base."""
        from engine.llm import embed as embedding

        request = build_request(model, [{"role": "input", "content": text} for text in texts], {}, "embed")
        recorded = self.archive.llm_answer(request.hash)
        if recorded is not None:
            self._tally.add_cached()
            return embedding.vectors(recorded.response)
        if self.settings.replay_only:
            raise LLMFatalError(
                f"no recorded embedding for request {request.hash[:12]} ({model}); "
                "the replayed run diverged from the original"
            )
        reservation = await self._budget.admit(model)
        observed = None

        async def send(attempt: int, timeout_s: float):
            return await embedding.aembed(
                model,
                texts,
                api_base=self.settings.api_base,
                api_key=self.settings.api_key,
                timeout_s=timeout_s,
                unpriced=self._unpriced,
            )

        try:
            reply, _, _ = await self._attempts(request, _Caller("embed", node_id), send, CallLimits())
            observed = (reply.cost_usd, reply.tokens_in)
            return reply.vectors
        finally:
            self._budget.release(reservation, observed)

    async def _call_with_retries(self, request: LLMRequest, caller: _Caller, limits: CallLimits) -> LLMAnswer:
        async def send(attempt: int, timeout_s: float):
            mock_response = provider.NO_MOCK
            if self._mock is not None:
                value = self._mock(request.model, request.messages, attempt)
                mock_response = provider.NO_MOCK if value is None else value
            params = {**request.answer_params, **request.transport_params}
            return await provider.acomplete(
                request.model,
                request.messages,
                params,
                api_base=self.settings.api_base,
                api_key=self.settings.api_key,
                timeout_s=timeout_s,
                mock_response=mock_response,
                unpriced=self._unpriced,
            )

        reply, call_id, latency = await self._attempts(request, caller, send, limits)
        return LLMAnswer(
            text=reply.text,
            model=request.model,
            tokens_in=reply.tokens_in,
            tokens_out=reply.tokens_out,
            cost_usd=reply.cost_usd,
            latency_s=latency,
            call_id=call_id,
            cached=False,
        )

    async def _attempts(
        self, request: LLMRequest, caller: _Caller, send: Callable[[int, float], Awaitable[Any]], limits: CallLimits
    ) -> tuple[Any, int, float]:
        """`send(attempt, timeout_s)` until it succeeds, a row per attempt: (reply, its row's id, latency)."""
        settings = self.settings
        attempts = (settings.max_retries if limits.retries is None else limits.retries) + 1
        timeout_s = settings.timeout_s if limits.timeout_s is None else limits.timeout_s
        for attempt in range(attempts):
            started = time.perf_counter()
            try:
                reply = await send(attempt, timeout_s)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                latency = time.perf_counter() - started
                self._write(request, caller, latency, error=error_text(exc))
                kind, line = classify(exc, request.model)
                if kind == FATAL:
                    raise LLMFatalError(line) from exc
                if kind == RETRY and attempt + 1 < attempts:
                    await self._sleep(settings.backoff_s(attempt, self._rng.random()))
                    continue
                tries = f" after {attempt + 1} attempts" if attempt else ""
                raise LLMError(f"{caller.purpose} call failed{tries}: {line}") from exc
            latency = time.perf_counter() - started
            call_id = self._write(request, caller, latency, reply=reply)
            return reply, call_id, latency
        raise AssertionError("unreachable")  # pragma: no cover

    def _write(
        self, request: LLMRequest, caller: _Caller, latency_s: float, *, reply: Any = None, error: str | None = None
    ) -> int:
        """One llm_calls row, committed now; no await between taking the id and writing it.

        reply: what a successful attempt returned (its record, tokens and dollars); error: why one failed
        (no response, 0 tokens and no cost: a failed call is not billed)."""
        response = reply.record() if reply is not None else None
        tokens_in, tokens_out = (reply.tokens_in, reply.tokens_out) if reply is not None else (0, 0)
        cost_usd = reply.cost_usd if reply is not None else None
        call = LLMCallRecord(
            id=self.archive.next_llm_call_id(),
            node_id=caller.node_id,
            purpose=caller.purpose,
            model=request.model,
            request_hash=request.hash,
            request=request.record,
            response=response,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            cost_usd=cost_usd,
            latency_s=latency_s,
            error=error,
            instance_id=caller.instance_id,
        )
        self.archive.add_llm_call(call)
        self._tally.add(call)
        if self.observer is not None:
            self.observer(error is None, error)
        self._budget.charge(cost_usd, tokens_in + tokens_out)
        return call.id


def _answer_from(call: LLMCallRecord) -> LLMAnswer:
    response = call.response or {}
    return LLMAnswer(
        text=str(response.get("text") or ""),
        model=call.model,
        tokens_in=int(call.tokens_in or 0),
        tokens_out=int(call.tokens_out or 0),
        cost_usd=call.cost_usd,
        latency_s=float(call.latency_s or 0.0),
        call_id=int(call.id),
        cached=True,
    )
