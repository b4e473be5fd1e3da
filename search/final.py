"""Rules that choose a search's final node."""
from __future__ import annotations

import numpy as np

from search.decisions import FinalChoice, evaluable
from search.tree import TreeView


def beta_quantile(q: float, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    from scipy.special import betaincinv  # lazy: only the end of a run needs it

    return betaincinv(a, b, q)


def epsilon_quantile(view: TreeView, epsilon: float) -> FinalChoice | None:
    """HGM's rule (Wang et al. 2025, arXiv 2510.21614, section 3): the node whose own posterior
    Beta(1 + s, 1 + f) has the highest epsilon-quantile, so a lucky node with few
    evaluations does not beat a proven one. Ties go to the older node."""
    nodes = evaluable(view)
    if len(nodes) == 0:
        return None
    q = beta_quantile(epsilon, 1.0 + view.s[nodes], 1.0 + view.f[nodes])
    best = int(np.argmax(q))
    node = int(nodes[best])
    return FinalChoice(
        node_id=node,
        rule=f"highest {epsilon:g}-quantile of Beta(1+s, 1+f) (HGM)",
        detail={"quantile": float(q[best]), "epsilon": epsilon, "n_evals": int(view.n_evals[node]),
                "mean": float(view.s[node] / view.n_evals[node]), "candidates": int(len(nodes))},
    )


def max_mean(view: TreeView, min_evals: int = 1) -> FinalChoice | None:
    """The highest own mean among nodes with at least `min_evals` dev evaluations
    (falling back to the most evaluated nodes when none has that many)."""
    nodes = evaluable(view)
    if len(nodes) == 0:
        return None
    need = min(min_evals, int(view.n_evals[nodes].max()))
    nodes = nodes[view.n_evals[nodes] >= need]
    means = view.s[nodes] / view.n_evals[nodes]
    best = int(np.argmax(means))
    node = int(nodes[best])
    return FinalChoice(
        node_id=node,
        rule=f"highest mean dev score with at least {need} evaluations",
        detail={"mean": float(means[best]), "n_evals": int(view.n_evals[node]), "candidates": int(len(nodes))},
    )
