"""One evaluation's access to the gateway: its bearer token, what it has used, and why it was ended.

The engine opens a session when it starts an evaluation of an agent that may
call a model, hands the job its token (never an API key), and closes the
session when the job is over: the token is then unknown to the gateway. The
session counts the tokens (in + out) of the answers its agent received,
answers served from the archive included, so that a replayed or resumed
evaluation meets its cap at the same call. The call that crosses the cap is
the last one answered (as for the run's budget); the next one ends the
evaluation: `ended` is set and `run_agent` stops the job.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from dataclasses import dataclass, field

MAX_CALLS_IN_FLIGHT = 4  # per evaluation: bounds the overshoot of the cap to a few calls


@dataclass
class AgentSession:
    token: str
    node_id: int | None
    instance_id: str | None
    label: str  # names the calls' keys: "node 7 instance HumanEval/2"
    cap: int | None  # tokens (in + out) one evaluation may use; None: no cap
    purpose: str = "agent"  # what its calls are booked as: 'agent', 'self_improve', 'smoke'
    tokens_used: int = 0
    cost_usd: float = 0.0  # dollars of the answers it received (recorded prices for replayed ones)
    calls: int = 0  # calls asked (answered, refused or failed)
    capped: bool = False
    stop_reason: str = ""  # the run's budget was reached, or a fatal model error: the run stops
    stop_fatal: bool = False
    overseer_reason: str = ""  # the overseer stopped this agent (a loop, no progress, reward hacking)
    transcript: list = field(default_factory=list)  # (what the agent sent last, the answer), for the overseer
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    gate: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(MAX_CALLS_IN_FLIGHT))

    @property
    def cap_reason(self) -> str:
        return f"agent token cap of {self.cap} exceeded ({self.tokens_used} tokens used in this evaluation)"

    def over_cap(self) -> bool:
        return self.cap is not None and self.tokens_used >= self.cap

    def next_key(self) -> str:
        """The call's identity in the replay cache: the k-th call of this node on this instance."""
        key = f"{self.purpose} {self.label} call {self.calls}"
        self.calls += 1
        return key

    def end_capped(self) -> None:
        self.capped = True
        self.ended.set()

    def end_overseen(self, reason: str) -> None:
        if not self.overseer_reason:
            self.overseer_reason = reason
        self.ended.set()

    def end_stopped(self, reason: str, fatal: bool) -> None:
        if not self.stop_reason:
            self.stop_reason, self.stop_fatal = reason, fatal
        self.ended.set()


class SessionTable:
    """token -> session, for the sessions open now; and which tokens belonged to evaluations that ended
    (kept as digests, so that a refusal can say why without the table holding old secrets)."""

    def __init__(self) -> None:
        self._open: dict[str, AgentSession] = {}
        self._ended: set[str] = set()

    def open(
        self,
        node_id: int | None,
        instance_id: str | None,
        cap: int | None,
        label: str | None = None,
        purpose: str = "agent",
    ) -> AgentSession:
        token = "clade-" + secrets.token_urlsafe(32)
        if label is None:
            label = f"node {node_id} instance {instance_id}"
        session = AgentSession(
            token=token, node_id=node_id, instance_id=instance_id, label=label, cap=cap, purpose=purpose
        )
        self._open[token] = session
        return session

    def close(self, session: AgentSession) -> None:
        if self._open.pop(session.token, None) is not None:
            self._ended.add(_digest(session.token))

    def why_refused(self, token: str) -> str:
        """Why `token` finds no open session: 'no token', 'ended' (its evaluation is over) or 'unknown'."""
        if not token:
            return "no token"
        return "ended" if _digest(token) in self._ended else "unknown"

    def find(self, token: str) -> AgentSession | None:
        return self._open.get(token)

    def __len__(self) -> int:
        return len(self._open)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
