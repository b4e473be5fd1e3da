"""What every mutator takes and returns.

A mutator turns a parent's files into a child's files. The scheduler gives it
the task's entry point (file, function, positional parameters) and, for
crossover, the files of a few other valid nodes ("donors", best first). It
returns the child's complete file set and a one-line description of what it
changed; the scheduler then runs `engine.mutators.validate.check_child` and
stores the child as `valid` or `invalid`.

A mutator that cannot make a child raises `MutationError` with a one-line
reason (the scheduler stores a `failed` child); it never returns the parent
unchanged, which would only be a duplicate.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy


class MutationError(Exception):
    """The mutator could not make a child; the message is one line saying why."""


@dataclass(frozen=True)
class MutationContext:
    entry_file: str  # e.g. "agent.py"
    entry_function: str  # e.g. "priority"
    entry_args: tuple[str, ...]  # e.g. ("item", "bins")
    donors: tuple[Mapping[str, str], ...] = ()  # files of other valid nodes (for crossover), best first
    whole_archive: bool = False  # the policy asks the meta-agent to see the archive (ADAS)
    operator_credit: Mapping[str, tuple[float, float]] = field(default_factory=dict)  # op -> (better, tried)


@dataclass(frozen=True)
class Proposal:
    files: dict[str, str]  # the child's complete file set (path -> text); unchanged files copied from the parent
    description: str  # one short line, e.g. "const 0.0->-1.3; insert term -0.7*(bins - item)"


@runtime_checkable
class Mutator(Protocol):
    name: str  # "offline", "llm", ...
    model: str | None  # None for offline

    def propose(
        self, parent_files: Mapping[str, str], context: MutationContext, rng: numpy.random.Generator
    ) -> Proposal:
        """Return a child of `parent_files`, or raise `MutationError`."""
        ...
