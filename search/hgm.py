"""The Huxley-Gödel Machine's policy.

Wang et al., "Huxley-Gödel Machine: Human-Level Coding Agent Development by
an Approximation of the Optimal Self-Improving Machine", arXiv 2510.21614:
- expand or evaluate by UCB-Air progressive widening: expand while
  t^alpha >= (nodes grown so far) + pending expansions, t = evaluations so far;
- expand the node with the largest Thompson draw from its clade's posterior
  Beta(1 + tau S, 1 + tau F) (clade-metaproductivity), over valid nodes with
  at least one evaluation; tau may cool down as (T / (T - t))^beta;
- evaluate the node with the largest draw from its own Beta(1 + s, 1 + f)
  among nodes with untried dev instances, on one of those at random;
- report the node with the highest epsilon-quantile of its own posterior.
Continuous evidence (search.evidence): every posterior counts an evaluation
as w Bernoulli trials, w = view.evidence (1 unless the task's measured noise
says one score is worth more): for clades, when w > 1, Beta(1 + tau w q,
1 + tau w (1 - q)) with q the rank of the clade's best mean in the archive,
drawn over the nodes that realise their clade's best
(search.evidence.frontier_ranks), and Beta(1 + w s, 1 + w f) for a node and
for the final rule.
Nodes grown counts valid children only: an invalid child takes no evaluation,
so counting it would starve the search of the expansions that replace it.

`make_policy("hgm")` wraps this policy in DGM's staged evaluation (a first
batch of 1/6 of the dev instances, the rest only with a mean of at least
0.4; search.cascade): a Clade default, not the paper's, chosen on
scripts/bench_search.py's landscapes, where screening children gives twice
the children per budget. `make_policy("hgm", stages="none")` (CLI
`--stages none`) is the paper's HGM.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from search.bounds import clade_thompson, own_thompson
from search.decisions import (
    Decision,
    Evaluate,
    Expand,
    FinalChoice,
    evaluable,
    pick_instance,
)
from search.evidence import frontier_ranks
from search.final import epsilon_quantile
from search.thompson import thompson_argmax
from search.tree import TreeView


@dataclass(frozen=True)
class HGMPolicy:
    name: str = "hgm"
    alpha: float = 0.6
    tau: float = 1.0
    cooldown_beta: float | None = None
    epsilon: float = 0.1

    def temperature(self, view: TreeView) -> float:
        if self.cooldown_beta is None or not view.budget:
            return self.tau
        remaining = max(view.budget - view.evaluations_done, 1)
        return self.tau * (view.budget / remaining) ** self.cooldown_beta

    def decide(self, view: TreeView, rng: np.random.Generator) -> Decision | None:
        t = view.evaluations_done
        grown = (view.n_valid - 1) + view.pending_expansions
        widen = t**self.alpha >= grown
        can_evaluate = bool(view.open_mask.any())
        if view.can_expand and (widen or not can_evaluate):
            # the candidates only when an expansion may follow: an O(n) pass most decisions (evaluations) skip
            candidates = evaluable(view)
            if len(candidates):
                return self._expand(view, candidates, rng, t, grown, widen)
        if can_evaluate:
            return self._evaluate(view, rng, t, grown)
        return None

    def _expand(
        self, view: TreeView, candidates: np.ndarray, rng: np.random.Generator, t: int, grown: int, widen: bool
    ) -> Expand:
        tau = self.temperature(view) * view.evidence
        if view.evidence > 1.0:  # continuous evidence: the rank of the clade's best (search.evidence.frontier_ranks)
            candidates, q = frontier_ranks(view, candidates)
            best, theta = thompson_argmax(1.0 + tau * q, 1.0 + tau * (1.0 - q), rng)
        elif self.cooldown_beta is None:  # a fixed tau: pruned exact draw (search.bounds)
            best, theta = clade_thompson(view, candidates, tau, rng)
        else:
            best, theta = thompson_argmax(1.0 + tau * view.S[candidates], 1.0 + tau * view.F[candidates], rng)
        node = int(candidates[best])
        return Expand(
            node,
            {
                "rule": "widen" if widen else "nothing to evaluate",
                "t": t,
                "t_alpha": t**self.alpha,
                "grown": grown,
                "tau": tau,
                "theta": theta,
                "S": float(view.S[node]),
                "F": float(view.F[node]),
                "candidates": len(candidates),
            },
        )

    def _evaluate(self, view: TreeView, rng: np.random.Generator, t: int, grown: int) -> Evaluate:
        nodes = view.open_nodes
        best, theta = own_thompson(view, nodes, rng, tau=view.evidence)
        node = int(nodes[best])
        instance = pick_instance(view, node, rng)
        return Evaluate(
            node,
            instance,
            {
                "t": t,
                "t_alpha": t**self.alpha,
                "grown": grown,
                "theta": theta,
                "candidates": len(nodes),
            },
        )

    def select_final(self, view: TreeView, rng: np.random.Generator) -> FinalChoice | None:
        return epsilon_quantile(view, self.epsilon)
