"""What every mutator is, takes and returns: the whole interface the loop uses.

A mutator turns a parent's files into a child's files. The loop gives it the
parent's files, the task's entry point (file, function, positional
parameters), for crossover the files of a few other valid nodes ("donors",
best first), and a random state. It returns a `Proposal`: the child's complete
file set and a one-line description of what it changed. The loop then checks
the child (`engine.mutators.validate.check_child`, the pyflakes gate, the
novelty check) and stores it as `valid` or `invalid`.

A mutator comes in one of two forms, declared by the base it subclasses; the
loop dispatches on the form and never probes for attributes:
- `SyncMutator.propose(...)`: made inline, in the loop (the offline mutator);
- `AsyncMutator.propose_async(...)`, the same arguments: awaited while
  evaluations go on (a model's conversation, a self-improvement run). The
  context names the parent, and `context.pinned` repeats a resumed or replayed
  expansion exactly (its key, model, answer format, novelty horizon).

Both share `Mutator`: a `name` (stored on every child), a `model` (None for
none), and optional capabilities with defaults a mutator overrides when it has
them: `novelty_check`, `orphans()`, `child_measured(node)`.

What ends an expansion:
- `MutationError` (one line): no child could be made; the loop stores a
  `failed` child whose reason is `"MutationError: <line>"`. Any other exception
  a mutator raises is stored the same way (a bug must not end the run).
- `ExpansionFailed(cause, key=..., model=..., ...)`: the same failed child, with
  what the expansion was (its key, so a resume does not adopt its calls again;
  the model that failed). The stored reason is the cause's, as if unwrapped.
- `engine.errors.StopRun` / `FatalStop`: the run stops taking new work (a spent
  budget; a bad key). The LLM client's `BudgetExceeded` and `LLMFatalError` are
  such stops. No child is stored.
A mutator never returns the parent unchanged, which would only be a duplicate.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy


class MutationError(Exception):
    """The mutator could not make a child; the message is one line saying why. `gate_rejected`: as in
    `Proposal`, the attempts thrown away before giving up."""

    def __init__(self, *args: object, gate_rejected: Mapping[str, int] | None = None) -> None:
        super().__init__(*args)
        self.gate_rejected: dict[str, int] = dict(gate_rejected or {})


@dataclass(frozen=True)
class Pinned:
    """What a resumed or replayed expansion repeats, each replacing the mutator's own choice when set."""

    key: str | None = None  # the expansion's identity: its recorded answers are reused
    model: str | None = None  # the model its first call asked (an ensemble draws it otherwise)
    answer_format: str | None = None  # what the model was asked for
    novelty_below: int | None = None  # the nodes its novelty check compared with (ids below this)
    recommendations: int | None = None  # the scratchpad version its prompt carried (0: none yet)
    prompt: int | None = None  # the prompt of --evolve-prompts' population it was made with


NOT_PINNED = Pinned()


@dataclass(frozen=True)
class MutationContext:
    """What the loop tells a mutator about one expansion, besides the parent's files."""

    entry_file: str  # e.g. "agent.py"
    entry_function: str  # e.g. "priority"
    entry_args: tuple[str, ...]  # e.g. ("item", "bins")
    donors: tuple[Mapping[str, str], ...] = ()  # files of other valid nodes (for crossover), best first
    whole_archive: bool = False  # the policy asks the meta-agent to see the archive (ADAS)
    operator_credit: Mapping[str, tuple[float, float]] = field(default_factory=dict)  # op -> (better, tried)
    parent: int = 0  # the node being expanded (an async mutator's conversation and key are about it)
    pinned: Pinned = NOT_PINNED  # what a resumed or replayed expansion repeats


@dataclass(frozen=True)
class Proposal:
    """A child as its mutator made it. Only `files` and `description` are required; the rest tell the loop
    what the expansion was, and each is stored with the child when set."""

    files: dict[str, str]  # the child's complete file set (path -> text); unchanged files copied from the parent
    description: str  # one short line, e.g. "const 0.0->-1.3; insert term -0.7*(bins - item)"
    model: str | None = None  # the model that wrote it, when not the mutator's `model` (an ensemble's pick)
    note: str = ""  # an improvement note planned before the edit (diagnose), stored as the node's note
    key: str = ""  # the expansion's identity ("parent 3 child 2"): a resumed run adopts answered ones by it
    answer_format: str = ""  # what the model was asked for ("diff", "rewrite"), for a replay to ask the same
    novelty_below: int | None = None  # with --embedding-model: its novelty check saw the nodes of smaller ids
    near_duplicate: str | None = None  # the mutator's own novelty verdict (embeddings): why it is one, else None
    invalid_reason: str | None = None  # the mutator's own check failed (a self-edit's smoke run): stored invalid
    trajectory: tuple[dict, ...] = ()  # the steps that made it (a self-edit's), stored with the child
    recommendations_version: int | None = None  # --meta-recommendations: the version its prompt carried (0: none)
    prompt_id: int | None = None  # --evolve-prompts: the prompt it was made with
    # the offline mutator's attempts its own static check threw away before this child, per operator they
    # named (kept in the expand event for scripts/bench_operators.py)
    gate_rejected: Mapping[str, int] = field(default_factory=dict)


class ExpansionFailed(Exception):
    """An expansion that made no child: the error, with what the expansion was.

    Stored as a `failed` child whose reason is the cause's `"Type: message"` (exactly as if the cause itself
    had been raised); `key`, `model`, `answer_format` and `trajectory` go with it (the expand event, the node's
    model, its steps)."""

    def __init__(
        self,
        cause: BaseException,
        *,
        key: str = "",
        model: str | None = None,
        answer_format: str = "",
        trajectory: tuple[dict, ...] = (),
        recommendations_version: int | None = None,
        prompt_id: int | None = None,
    ) -> None:
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.cause: BaseException = cause
        self.key: str = key
        self.model: str | None = model
        self.answer_format: str = answer_format
        self.trajectory: tuple[dict, ...] = trajectory
        self.recommendations_version: int | None = recommendations_version
        self.prompt_id: int | None = prompt_id

    @property
    def reason(self) -> str:
        """What the failed node's `reason` says (at most 500 characters)."""
        return f"{type(self.cause).__name__}: {self.cause}"[:500]

    @classmethod
    def of(cls, error: BaseException) -> ExpansionFailed:
        """`error` as a failed expansion: itself when it is one, else wrapped with nothing more known."""
        return error if isinstance(error, ExpansionFailed) else cls(error)


class Mutator(ABC):
    """What both forms share. Subclass `SyncMutator` or `AsyncMutator`, never this one."""

    name: str  # "offline", "llm", ...: stored on every child it makes
    model: str | None = None  # the model it calls (named on a child that failed); None for none
    # False: only exact duplicates count, not near-duplicates (a self-edit of a whole agent is near its parent
    # by design). The novelty check is the loop's unless the mutator made its own (`Proposal.near_duplicate`).
    novelty_check: bool = True

    def orphans(self) -> list[tuple[int, str]]:
        """(parent, key) of expansions paid for before a crash whose child was never stored, oldest first: a
        resumed run finishes them first, with `Pinned(key=key)`. Only an asynchronous mutator has any."""
        return []

    def child_measured(self, node: int) -> None:
        """A child's dev evaluation was recorded (e.g. credit the model that wrote it). Default: nothing."""
        return None


class SyncMutator(Mutator):
    """A mutator whose children are made inline, in the loop (fast, no waiting on anything)."""

    @abstractmethod
    def propose(
        self, parent_files: Mapping[str, str], context: MutationContext, rng: numpy.random.Generator
    ) -> Proposal:
        """Return a child of `parent_files`, or raise `MutationError`."""


class AsyncMutator(Mutator):
    """A mutator whose expansions are awaited while evaluations go on (up to --llm-concurrency at once)."""

    @abstractmethod
    async def propose_async(
        self, parent_files: Mapping[str, str], context: MutationContext, rng: numpy.random.Generator
    ) -> Proposal:
        """Return a child of node `context.parent` (whose files are `parent_files`), or raise `MutationError`,
        `ExpansionFailed` or a `StopRun`. `context.pinned` repeats a resumed or replayed expansion as first
        made."""

    async def write_due(self) -> None:
        """Write what comes due before the next child when no expansion will (a replay copies a failed child
        instead of making it again): the LLM mutator's scratchpad and new prompts. Default: nothing."""
        return None
