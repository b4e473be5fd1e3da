"""Operator credit: how often each offline operator made a child better than its parent.

The offline mutator draws its operators by this record
(`engine.mutators.offline.credited_weights`). A child counts for every
operator named in its description: once, when it is stored invalid (a miss),
or at its first finished dev evaluation, a hit when its status is `ok` and
its score beats the parent's own mean dev score at that moment. Any other
status is a miss whatever the score: an error, a timeout, and a failure the
task's evaluator caught and reported (`failed_in_evaluator`); an error's
score of 0 would otherwise beat a parent whose mean is below 0. A failure
costs an operator what a child no better than its parent costs (one more
try, no success), as in probability matching (Thierens, GECCO 2005). A
resumed run rebuilds the record by replaying the archive's nodes and
evaluations in their order, so it reads as it did before the stop.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.mutators import operators_in
from search.tree import TreeStats


@dataclass
class OperatorCredit:
    counts: dict[str, list[float]] = field(default_factory=dict)  # operator -> [better, tried]
    _waiting: dict[int, tuple[int, tuple[str, ...]]] = field(default_factory=dict)  # child -> (parent, ops)

    def child_stored(self, node: int, parent: int | None, description: str, valid: bool) -> None:
        if parent is None:  # a root: no operator made it
            return
        ops = tuple(operators_in(description or ""))
        if not ops:
            return
        if valid:
            self._waiting[node] = (parent, ops)
        else:
            self._add(ops, better=False)

    def before_evaluation(self, tree: TreeStats, node: int) -> float | None:
        """The parent's mean to beat, when `node` still waits for its first finished evaluation."""
        waiting = self._waiting.get(node)
        if waiting is None:
            return None
        parent = waiting[0]
        return tree.mean(parent)

    def evaluated(self, node: int, score: float, parent_mean: float | None, ok: bool = True) -> None:
        if parent_mean is None:
            return
        _, ops = self._waiting.pop(node)
        self._add(ops, better=ok and score > parent_mean)

    def as_mapping(self) -> dict[str, tuple[float, float]]:
        return {name: (better, tried) for name, (better, tried) in self.counts.items()}

    def _add(self, ops: tuple[str, ...], better: bool) -> None:
        for name in ops:
            better_tried = self.counts.setdefault(name, [0.0, 0.0])
            better_tried[0] += 1.0 if better else 0.0
            better_tried[1] += 1.0
