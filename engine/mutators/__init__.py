"""Mutators: turn a parent's files into a child's (docs/design.md, "Mutators").

`engine.mutators.base` declares the interface (`SyncMutator`, `AsyncMutator`, `Proposal`, `Pinned`,
`ExpansionFailed`); `OfflineMutator` is the built-in genetic-programming mutator (no LLM);
`check_child` is the static validity check every child goes through.
"""

from __future__ import annotations

from engine.mutators.base import (
    NOT_PINNED,
    AsyncMutator,
    ExpansionFailed,
    MutationContext,
    MutationError,
    Mutator,
    Pinned,
    Proposal,
    SyncMutator,
)
from engine.mutators.flakes import new_name_problem
from engine.mutators.offline import OfflineMutator, operators_in
from engine.mutators.validate import check_child

__all__ = [
    "NOT_PINNED",
    "AsyncMutator",
    "ExpansionFailed",
    "MutationContext",
    "MutationError",
    "Mutator",
    "OfflineMutator",
    "Pinned",
    "Proposal",
    "SyncMutator",
    "check_child",
    "new_name_problem",
    "operators_in",
]
