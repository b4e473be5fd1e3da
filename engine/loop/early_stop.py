"""Early stopping: `--patience N` (no better best full-dev mean in N dev evaluations) and `--target X` (the best
full-dev mean reached the target's score).

The *best full-dev mean* is the one the run's summary and `runs list` report
(`Archive.best_fully_measured_node`): the highest mean of first-repeat dev
scores among nodes evaluated on every dev instance. It is followed here
evaluation by evaluation, so the check costs nothing; a resumed run rebuilds it
from the archive's dev evaluations in the order they finished, never from
memory, so a run stopped early and resumed with the same settings stops again
at once, and one resumed with a larger `--patience` goes on from where it was
(a reached `--target`, which a resume keeps, stops it again).
Every dev evaluation counts towards patience, re-measures included (they are
what the budget counts).

OpenEvolve stops early on a plateau (`early_stopping_patience`, counted in
iterations, with a `convergence_threshold`); here the unit is the budget's, a
dev evaluation, and any rise of the best counts as an improvement.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

# a best that rises by less is no improvement (float noise in a mean of equal scores)
IMPROVEMENT = 1e-12
PATIENCE_RULE = "patience"
TARGET_RULE = "target"


@dataclass
class EarlyStop:
    """The best full-dev mean, followed one dev evaluation at a time, and the two rules that may end the run."""

    n_dev: int
    patience: int | None = None  # dev evaluations without a better best full-dev mean (None: no such rule)
    target: float | None = None  # the best full-dev mean that ends the run (None: no such rule)
    best: float = -math.inf
    best_node: int | None = None
    since: int = 0  # dev evaluations since the best last rose (0 before there is a best)
    _sums: dict[int, float] = field(default_factory=dict)
    _seen: dict[int, set[str]] = field(default_factory=dict)

    @property
    def active(self) -> bool:
        return self.patience is not None or self.target is not None

    def replay(self, evaluations: Iterable[tuple[int, str, int, float]]) -> EarlyStop:
        """Follow (node, instance, repeat, score) of the run's dev evaluations so far, in the order they
        finished (a resumed run's history); returns itself."""
        for node, instance, repeat, score in evaluations:
            self.evaluated(node, instance, repeat, score)
        return self

    def evaluated(self, node: int, instance: str, repeat: int, score: float) -> None:
        """One more dev evaluation: the node's first-repeat mean once it covers every dev instance."""
        risen = False
        seen = self._seen.setdefault(node, set())
        if repeat == 0 and instance not in seen:
            seen.add(instance)
            self._sums[node] = self._sums.get(node, 0.0) + float(score)
            if len(seen) >= self.n_dev:
                mean = self._sums[node] / len(seen)
                if mean > self.best + IMPROVEMENT:
                    self.best, self.best_node, risen = mean, node, True
        if risen:
            self.since = 0
        elif self.best_node is not None:
            self.since += 1

    def verdict(self) -> tuple[str, dict] | None:
        """(the stop's line, its event's detail) when a rule ends the run now, else None."""
        if self.best_node is None:
            return None
        detail = {"best_node": self.best_node, "best_mean": self.best, "evaluations_since": self.since}
        if self.target is not None and self.best >= self.target - IMPROVEMENT:
            line = f"stopped early: target {self.target:g} reached; best node {self.best_node} ({self.best:.4f})"
            return line, {"rule": TARGET_RULE, "target": self.target, **detail}
        if self.patience is not None and self.since >= self.patience:
            line = f"stopped early: no improvement in {self.patience} evaluations; best node {self.best_node}"
            return line, {"rule": PATIENCE_RULE, "patience": self.patience, **detail}
        return None
