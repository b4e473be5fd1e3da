"""Frozen records that cross the boundary between the engine and the archive."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True)
class NodeRecord:
    id: int
    parent_id: int | None
    depth: int
    status: str  # 'valid' | 'invalid' | 'failed'
    mutator: str
    model: str | None = None
    diff: str = ""
    code_hash: str = ""
    reason: str = ""
    description: str = ""
    note: str = ""  # markdown: the review (diagnosis) that planned the change making this node
    role: str = "agent"  # or 'tester': the arena's test-writing population (engine/arena)
    recommendations_version: int | None = None  # the scratchpad version its prompt carried (--meta-recommendations)
    prompt_id: int | None = None  # the prompt of the population it was made with (--evolve-prompts)

    @classmethod
    def root(cls, node_id: int, code_hash: str, description: str, role: str = "agent") -> NodeRecord:
        """A population's first node: a seed, valid, with no parent."""
        return cls(node_id, None, 0, "valid", "seed", code_hash=code_hash, description=description, role=role)


@dataclass(frozen=True)
class EvaluationRecord:
    node_id: int
    instance_id: str
    split: str  # 'dev' | 'holdout'
    repeat: int
    score: float
    metrics: dict = field(default_factory=dict)
    # 'ok' | 'error' | 'timeout' | 'killed' | 'bad_output' | 'failed_in_evaluator' (the evaluator ran but reported
    # the candidate failed: an OpenEvolve `error`, a ShinkaEvolve `correct: false` with a message, a traceback)
    status: str = "ok"
    runtime_s: float | None = 0.0  # None: not known (an arena tester's run that a crash interrupted)
    stdout_tail: str = ""
    stderr_tail: str = ""
    feedback: str = ""
    worker: str = ""
    started_at: datetime | None = None
    finished_at: datetime | None = None


@dataclass(frozen=True)
class ReferenceEvaluation:
    """A reference agent's result on one instance, kept outside the tree for the summary."""

    agent: str
    instance_id: str
    split: str
    score: float
    metrics: dict = field(default_factory=dict)
    status: str = "ok"
    runtime_s: float = 0.0
    feedback: str = ""


@dataclass(frozen=True)
class LLMCallRecord:
    """One model call, stored when it returns (or fails); doubles as the replay cache by request_hash."""

    id: int
    node_id: int | None
    purpose: str  # 'mutate', 'diagnose', 'retry', 'agent' (an agent's own call, through the gateway), ...
    model: str
    request_hash: str
    request: dict
    response: dict | None
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float | None = None  # None where the provider's price is unknown
    latency_s: float = 0.0
    error: str | None = None
    instance_id: str | None = None  # the instance an agent's call was made for (purpose 'agent')


@dataclass(frozen=True)
class NodeStats:
    """One node's own dev numbers."""

    mean: float | None  # None until the node has a dev evaluation
    n: int  # dev evaluations
    n_failed: int  # dev evaluations whose status is not 'ok'


@dataclass(frozen=True)
class LLMTotals:
    """Every model call of the run, summed."""

    cost_usd: float
    tokens_in: int
    tokens_out: int
    calls: int
    errors: int  # calls that failed (their `error` is set)
    unpriced: int  # successful calls with no known price (cost_usd NULL)
