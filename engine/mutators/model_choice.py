"""Which model writes the next child: fixed weights, or ShinkaEvolve's bandit.

`--model a,b,c` draws a model per expansion with equal weights (`a@3,b@1`
sets them). `--model-choice bandit` follows ShinkaEvolve (Lange et al. 2025,
"ShinkaEvolve", arXiv 2509.19349, section 3.3): an asymmetric UCB1 over the
models, credited with a child's improvement over its parent, max(0, child
mean - parent mean), so a model is never punished below zero for a child
that is worse (most children are); optionally divided by the call's cost.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from engine.errors import UserError


def parse_models(spec: str) -> list[tuple[str, float]]:
    """'a,b@2' -> [('a', 1.0), ('b', 2.0)]; a bad weight is a UserError."""
    out = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        name, _, weight = part.partition("@")
        try:
            w = float(weight) if weight else 1.0
        except ValueError:
            raise UserError(f"--model {spec!r}: weight {weight!r} of {name!r} is not a number") from None
        if w <= 0 or not name:
            raise UserError(f"--model {spec!r}: each model needs a name and a positive weight")
        out.append((name, w))
    if not out:
        raise UserError("--model needs at least one model name")
    return out


@dataclass
class FixedWeights:
    models: list[tuple[str, float]]

    def pick(self, rng: np.random.Generator) -> str:
        if len(self.models) == 1:
            return self.models[0][0]
        weights = np.array([w for _, w in self.models])
        return self.models[int(rng.choice(len(self.models), p=weights / weights.sum()))][0]

    def credit(self, model: str, improvement: float, cost: float | None = None) -> None:
        """Fixed weights learn nothing."""


@dataclass
class AsymmetricUCB:
    """UCB1 on each model's mean positive improvement; untried models first."""

    models: list[str]
    exploration: float = 1.0
    by_cost: bool = False
    pulls: dict[str, int] = field(default_factory=dict)
    reward: dict[str, float] = field(default_factory=dict)

    def pick(self, rng: np.random.Generator) -> str:
        untried = [m for m in self.models if self.pulls.get(m, 0) == 0]
        if untried:
            return untried[int(rng.integers(len(untried)))]
        total = sum(self.pulls.values())
        scores = [
            self.reward[m] / self.pulls[m] + self.exploration * math.sqrt(2 * math.log(total) / self.pulls[m])
            for m in self.models
        ]
        return self.models[int(np.argmax(scores))]

    def credit(self, model: str, improvement: float, cost: float | None = None) -> None:
        gain = max(0.0, improvement)
        if self.by_cost and cost:
            gain /= cost
        self.pulls[model] = self.pulls.get(model, 0) + 1
        self.reward[model] = self.reward.get(model, 0.0) + gain


def make_chooser(spec: str, kind: str):
    models = parse_models(spec)
    if kind == "bandit":
        return AsymmetricUCB([m for m, _ in models])
    return FixedWeights(models)
