"""What a policy returns, and the interface every policy keeps.

A policy is pure: it reads a frozen `TreeView` and a random generator and
returns a decision with the numbers behind it (`detail`, written to the
archive's `events` so a run can be audited). It never writes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from search.tree import TreeView


@dataclass(frozen=True)
class Expand:
    node_id: int
    detail: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Evaluate:
    node_id: int
    instance: int  # index into the run's dev instances
    detail: dict = field(default_factory=dict)


@dataclass(frozen=True)
class FinalChoice:
    node_id: int
    rule: str  # one line a person reads, e.g. "highest 0.1-quantile of Beta(1+s, 1+f)"
    detail: dict = field(default_factory=dict)


Decision = Expand | Evaluate


class Policy(Protocol):
    @property
    def name(self) -> str:
        """The policy's name, as `make_policy` and the archive's config know it."""

    def decide(self, view: TreeView, rng: np.random.Generator) -> Decision | None:
        """The next step, or None when nothing can be done now."""

    def select_final(self, view: TreeView, rng: np.random.Generator) -> FinalChoice | None:
        """The node to report as the search's answer (None when no node is valid and evaluated)."""


def evaluable(view: TreeView) -> np.ndarray:
    """Valid nodes with at least one finished dev evaluation: those a policy may expand."""
    return np.flatnonzero(view.valid & (view.n_evals > 0))


def pick_instance(view: TreeView, node: int, rng: np.random.Generator) -> int:
    """An instance the node has not run, uniformly at random (HGM)."""
    untried = view.untried(node)
    return int(untried[int(rng.integers(len(untried)))])
