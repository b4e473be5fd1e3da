"""The Darwin Gödel Machine's parent rule (`dgm`).

Source: Zhang, Hu, Lu, Lange, Clune, "Darwin Gödel Machine: Open-Ended
Evolution of Self-Improving Agents", arXiv 2505.22954, and its public code
(jennyzzt/dgm, `DGM_outer.py`, `choose_selfimproves`, method
`score_child_prop`, the default; `self_improve_step.py` for the stages).

Parent rule: every node of the archive is a candidate, with probability

    p_i  proportional to  sigmoid(10 (a_i - 0.5)) / (1 + n_i)

a_i: the node's accuracy, i.e. its mean dev score over the instances it was
evaluated on (DGM's `accuracy_score` is resolved / submitted over the tasks
run so far, so a child stopped after the small first batch keeps that
batch's score); n_i: its children in the archive. DGM's archive only holds
children that compiled and produced a patch (`filter_compiled`); children
that fail that check are never counted. Here: n_i = the node's valid
children (`n_valid_children`), including children still being evaluated
(DGM's generations are synchronous, so a generation's children are counted
from the next generation on; with asynchronous evaluation there is no such
boundary). Candidates: evaluated nodes with nothing left open, those whose
last instances are still in flight included with the scores that came back
(search.generational.drawable_mask: asynchronous Thompson sampling's rule,
Kandasamy et al. 2018; with one worker, the settled nodes); the archive is
DGM's `keep_all`. Parents are drawn with replacement, one per expansion.

Continuous evidence (search.evidence, w > 1: a task of one instance scored by a
number): accuracies such as 0.868 and 0.879 sit on the flat top of the
sigmoid, so the rule cannot tell them apart; a_i is then the node's rank
quantile among the candidates, (rank - 1/2) / count, a relative signal that
keeps DGM's shape: the upper half favoured, the best about e^5 times the
median's odds.
Staged evaluation (DGM, `self_improve_step.py`): a child first runs a small
fixed subset (10 SWE-bench tasks); only if it resolves at least 40% of them
does it run the medium subset (50 more). `make_policy("dgm")` wraps this rule
in `search.cascade.Staged` with DGM's proportions scaled to the run's dev
set: a first batch of 1/6 of the dev instances (10 of DGM's 60, at least 1),
then the rest only with a mean of at least 0.4 (`DGM_STAGES`).
Departures: DGM's third stage (the full 200 tasks, only for nodes above the
archive's second-best full score) is not reproduced: the run's dev set is
the whole evaluation. The first batch is drawn at random per node (the
shared loop's instance rule), not one fixed subset for every node.
Final choice: HGM's epsilon-quantile rule by default (selectable, see
`search.final`); DGM reports its best node by score.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from search.cascade import Stage
from search.decisions import Decision, FinalChoice
from search.final import epsilon_quantile
from search.generational import drawable_mask, generational_decide, sample_index
from search.tree import TreeView

DGM_STAGES = (Stage(first=1 / 6, threshold=0.4),)


def sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)), without overflow for large |x|."""
    x = np.asarray(x, dtype=np.float64)
    z = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + z), z / (1.0 + z))


@dataclass(frozen=True)
class DGMPolicy:
    name: str = "dgm"
    steepness: float = 10.0  # sigmoid(steepness (a - midpoint)): DGM's 10 and 0.5
    midpoint: float = 0.5
    epsilon: float = 0.1  # the final rule's quantile

    def weights(self, view: TreeView) -> np.ndarray:
        """Each node's unnormalized weight sigmoid(10 (a - 0.5)) / (1 + n_valid_children); 0 if not a candidate."""
        nodes = np.flatnonzero(drawable_mask(view))
        out = np.zeros(view.n)
        out[nodes] = self._weights(view, nodes)
        return out

    def probabilities(self, view: TreeView) -> np.ndarray:
        """Each node's probability of being the next parent (zeros when there is no candidate)."""
        w = self.weights(view)
        total = w.sum()
        return w / total if total > 0 else w

    def _weights(self, view: TreeView, nodes: np.ndarray) -> np.ndarray:
        a = view.mean(nodes)
        if view.evidence > 1.0 and len(a) > 1:  # continuous scores: a node's rank among the candidates
            from scipy.stats import rankdata

            a = (rankdata(a) - 0.5) / len(a)
        return sigmoid(self.steepness * (a - self.midpoint)) / (1.0 + view.n_valid_children[nodes])

    def parent(self, view: TreeView, rng: np.random.Generator) -> tuple[int, dict] | None:
        nodes = np.flatnonzero(drawable_mask(view))
        if len(nodes) == 0:
            return None
        w = self._weights(view, nodes)
        k = sample_index(w, rng)
        node = int(nodes[k])
        return node, {
            "rule": "sigmoid(10 (a - 0.5)) / (1 + children)",
            "weight": float(w[k]),
            "p": float(w[k] / w.sum()),
            "a": view.mean(node),
            "children": int(view.n_valid_children[node]),
            "candidates": len(nodes),
        }

    def decide(self, view: TreeView, rng: np.random.Generator) -> Decision | None:
        return generational_decide(view, rng, self.parent)

    def select_final(self, view: TreeView, rng: np.random.Generator) -> FinalChoice | None:
        return epsilon_quantile(view, self.epsilon)
