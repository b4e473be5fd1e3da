"""Staged (cascade) evaluation, for any policy: a first batch of instances, the rest only above a threshold.

`Staged(inner, first, threshold)` hands the inner policy a view in which a
node is no longer open
- while it has `first` instances tried but not all of them finished (the
  stage's results decide what comes next, so the next batch waits), and
- for good once it has finished exactly its first `first` instances with a
  mean below `threshold` (it stays in the tree, a candidate parent with that
  score, and is never evaluated further).
A node at or above the threshold is open again for the rest of its dev
instances. Several stages nest: `with_stages(policy, "4:0.4,8:0.6")` is
Staged(Staged(policy, 8, 0.6), 4, 0.4). The final choice only considers
nodes that passed the (deepest) stage, or every node when none has.

Sources: DGM (Zhang et al. 2025, arXiv 2505.22954; jennyzzt/dgm
`self_improve_step.py`: 10 tasks, then 50 more if at least 40% resolved;
see search.dgm) and OpenEvolve's cascade evaluation (stage thresholds 0.5,
0.75, 0.9 over its evaluator's own stages). Pass rule: mean >= threshold
(DGM's `resolved >= len(tasks) * 0.4`).

`first` is a count of instances (an int) or a fraction of the run's dev
instances (a float in (0, 1]: ceil(fraction * n), at least 1). A stage with
`first` at or above the number of dev instances does nothing.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass

import numpy as np

from search.decisions import Decision, Evaluate, FinalChoice, Policy
from search.tree import TreeView


@dataclass(frozen=True)
class Stage:
    first: int | float  # instances in the batch: a count, or a fraction of the dev instances
    threshold: float  # a node continues when its mean over the batch is at least this

    def size(self, n_instances: int) -> int:
        if isinstance(self.first, float):
            return max(1, math.ceil(self.first * n_instances - 1e-9))
        return int(self.first)

    def spec(self) -> str:
        first = f"{100 * self.first:g}%" if isinstance(self.first, float) else str(self.first)
        return f"{first}:{self.threshold:g}"


@dataclass(frozen=True)
class Staged:
    """A policy whose nodes are evaluated in a first batch, and further only above a threshold."""

    inner: Policy
    first: int | float
    threshold: float

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def stage(self) -> Stage:
        return Stage(self.first, self.threshold)

    def masks(self, view: TreeView) -> tuple[np.ndarray, np.ndarray, int]:
        """(hidden, passed, batch size) over every node: hidden from open_mask; passed the stage."""
        k = self.stage.size(view.n_instances)
        tried = view.n_evals + view.n_in_flight
        at_gate = tried == k
        finished = view.n_evals == k
        above = view.s >= self.threshold * k - 1e-9  # at the gate, s is the batch's sum: mean >= threshold
        hidden = at_gate & ~(finished & above)  # waiting for the batch, or below the threshold
        passed = view.valid & ((tried > k) | (at_gate & finished & above))
        return hidden, passed, k

    def stage_view(self, view: TreeView) -> TreeView:
        """The view the inner policy sees: open_mask without the nodes this stage holds back."""
        hidden, _, k = self.masks(view)
        if k >= view.n_instances:
            return view
        open_mask = view.open_mask & ~hidden
        open_mask.flags.writeable = False
        return dataclasses.replace(view, open_mask=open_mask, stage_key=view.stage_key + (self.stage.spec(),))

    def decide(self, view: TreeView, rng: np.random.Generator) -> Decision | None:
        decision = self.inner.decide(self.stage_view(view), rng)
        if isinstance(decision, Evaluate):
            k = self.stage.size(view.n_instances)
            tried = int(view.n_evals[decision.node_id] + view.n_in_flight[decision.node_id])
            if tried < k < view.n_instances:  # annotate with the earliest stage the node is in
                detail = {**decision.detail, "stage": self.stage.spec(), "stage_batch": k}
                decision = dataclasses.replace(decision, detail=detail)
        return decision

    def select_final(self, view: TreeView, rng: np.random.Generator) -> FinalChoice | None:
        _, passed, k = self.masks(view)
        if k < view.n_instances and (passed & (view.n_evals > 0)).any():
            valid = view.valid & passed
            valid.flags.writeable = False
            view = dataclasses.replace(view, valid=valid)
        return self.inner.select_final(view, rng)

    def __getattr__(self, attr: str):
        """The inner policy's score methods (probabilities, weights, ...) on the staged view."""
        if attr.startswith("_") or attr in ("inner", "first", "threshold"):
            raise AttributeError(attr)
        value = getattr(self.inner, attr)
        if callable(value) and attr in SCORE_METHODS:
            return lambda view, *args, **kwargs: value(self.stage_view(view), *args, **kwargs)
        return value


SCORE_METHODS = frozenset({"probabilities", "weights", "scores", "island_probabilities", "ucb"})

USAGE = "expected FIRST:THRESHOLD[,FIRST:THRESHOLD...], FIRST a count or a percentage, e.g. 4:0.5 or 25%:0.4"


def parse_stages(spec: str) -> tuple[Stage, ...]:
    """'4:0.5' or '25%:0.4,50%:0.6' -> stages; 'none' or '' -> no stage. ValueError (one line) otherwise."""
    text = spec.strip()
    if text.lower() in ("", "none", "off"):
        return ()
    stages: list[Stage] = []
    for part in text.split(","):
        first_text, sep, threshold_text = part.strip().partition(":")
        if not sep:
            raise ValueError(f"bad stages {spec!r}: {USAGE}")
        try:
            threshold = float(threshold_text)
            if first_text.endswith("%"):
                fraction = float(first_text[:-1]) / 100.0
                if not 0.0 < fraction <= 1.0:
                    raise ValueError
                first: int | float = fraction
            else:
                first = int(first_text)
                if first < 1:
                    raise ValueError
        except ValueError:
            raise ValueError(f"bad stages {spec!r}: {USAGE}") from None
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"bad stages {spec!r}: a threshold is a mean score, between 0 and 1")
        stages.append(Stage(first, threshold))
    kinds = {isinstance(s.first, float) for s in stages}
    if len(kinds) == 1 and any(b.first <= a.first for a, b in itertools.pairwise(stages)):
        raise ValueError(f"bad stages {spec!r}: each stage's batch must be larger than the previous one")
    return tuple(stages)


def first_batch(policy: object, n_instances: int) -> int:
    """The dev instances a node is evaluated on before any stage judges it: the smallest stage's batch
    among the policy's wrappers, or every instance for an unstaged policy."""
    sizes = [n_instances]
    while policy is not None:
        if isinstance(policy, Staged):
            sizes.append(policy.stage.size(n_instances))
        policy = getattr(policy, "inner", None)
    return max(1, min(sizes))


def with_stages(policy: Policy, stages: str | tuple[Stage, ...] | list[Stage]) -> Policy:
    """The policy with staged evaluation (a spec string as in `parse_stages`, or Stage objects)."""
    if isinstance(stages, str):
        stages = parse_stages(stages)
    for stage in reversed(tuple(stages)):
        policy = Staged(policy, stage.first, stage.threshold)
    return policy
