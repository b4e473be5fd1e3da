"""Rules that choose a search's final node, selectable for any policy (`WithFinal`, CLI `--final`).

- `epsilon_quantile` (default): HGM's rule, the highest epsilon-quantile of the
  node's own Beta(1 + s, 1 + f), epsilon = 0.1;
- `max_mean`: the highest own mean dev score (at least one evaluation);
- `max_mean_k`: the highest own mean among nodes with at least k evaluations
  (k defaults to every dev instance; the most evaluated nodes when none has k).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from search.decisions import Decision, FinalChoice, Policy, evaluable
from search.names import FINAL_RULES
from search.tree import TreeView


def beta_quantile(q: float, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    from scipy.special import betaincinv  # lazy: only the end of a run needs it

    return betaincinv(a, b, q)


def epsilon_quantile(view: TreeView, epsilon: float) -> FinalChoice | None:
    """HGM's rule (Wang et al. 2025, arXiv 2510.21614, section 3): the node whose own posterior
    Beta(1 + s, 1 + f) has the highest epsilon-quantile, so a lucky node with few
    evaluations does not beat a proven one. Ties go to the older node. With continuous
    evidence w (search.evidence) the posterior is Beta(1 + w s, 1 + w f)."""
    nodes = evaluable(view)
    if len(nodes) == 0:
        return None
    w = view.evidence  # an evaluation's worth in Bernoulli trials (search.evidence)
    q = beta_quantile(epsilon, 1.0 + w * view.s[nodes], 1.0 + w * view.f[nodes])
    best = int(np.argmax(q))
    node = int(nodes[best])
    return FinalChoice(
        node_id=node,
        rule=(
            f"highest {epsilon:g}-quantile of Beta(1+s, 1+f) (HGM)"
            if w == 1.0
            else f"highest {epsilon:g}-quantile of Beta(1+w s, 1+w f), w = {w:g} (HGM, continuous evidence)"
        ),
        detail={
            "quantile": float(q[best]),
            "epsilon": epsilon,
            "n_evals": int(view.n_evals[node]),
            "mean": view.mean(node),
            "candidates": len(nodes),
        },
    )


def max_mean(view: TreeView, min_evals: int = 1) -> FinalChoice | None:
    """The highest own mean among nodes with at least `min_evals` dev evaluations
    (falling back to the most evaluated nodes when none has that many)."""
    nodes = evaluable(view)
    if len(nodes) == 0:
        return None
    need = min(min_evals, int(view.n_evals[nodes].max()))
    nodes = nodes[view.n_evals[nodes] >= need]
    means = view.mean(nodes)
    best = int(np.argmax(means))
    node = int(nodes[best])
    return FinalChoice(
        node_id=node,
        rule=f"highest mean dev score with at least {need} evaluations",
        detail={"mean": float(means[best]), "n_evals": int(view.n_evals[node]), "candidates": len(nodes)},
    )


def max_mean_k(view: TreeView, k: int | None = None) -> FinalChoice | None:
    """ "Max mean with at least k evaluations": the highest own mean among nodes with >= k dev evaluations
    (k = None: every dev instance); when no node has k, those with the most evaluations."""
    return max_mean(view, view.n_instances if k is None else k)


FinalRule = Callable[[TreeView], "FinalChoice | None"]


def final_rule(name: str, k: int | None = None, epsilon: float = 0.1) -> FinalRule:
    """A final rule by name (FINAL_RULES): epsilon_quantile(epsilon), max_mean (at least one
    evaluation), max_mean_k(k) (k = None: every dev instance). ValueError (one line) otherwise."""
    if name == "epsilon_quantile":
        if not 0.0 < epsilon < 1.0:
            raise ValueError(f"the epsilon-quantile rule needs 0 < epsilon < 1, not {epsilon}")
        return lambda view: epsilon_quantile(view, epsilon)
    if name == "max_mean":
        return lambda view: max_mean(view, 1)
    if name == "max_mean_k":
        if k is not None and k < 1:
            raise ValueError(f"max_mean_k needs k >= 1 evaluations, not {k}")
        return lambda view: max_mean_k(view, k)
    raise ValueError(f"unknown final rule {name!r}; choose one of: {', '.join(FINAL_RULES)}")


@dataclass(frozen=True)
class WithFinal:
    """Any policy with another final rule: decisions are the inner policy's, the final choice is `rule`'s."""

    inner: Policy
    rule: str = "epsilon_quantile"
    k: int | None = None
    epsilon: float = 0.1

    def __post_init__(self) -> None:
        final_rule(self.rule, self.k, self.epsilon)  # fail now on a bad name or k, not at the end of a run

    @property
    def name(self) -> str:
        return self.inner.name

    def decide(self, view: TreeView, rng: np.random.Generator) -> Decision | None:
        return self.inner.decide(view, rng)

    def select_final(self, view: TreeView, rng: np.random.Generator) -> FinalChoice | None:
        return final_rule(self.rule, self.k, self.epsilon)(view)

    def __getattr__(self, attr: str):
        if attr.startswith("_") or attr in ("inner", "rule", "k", "epsilon"):
            raise AttributeError(attr)
        return getattr(self.inner, attr)
