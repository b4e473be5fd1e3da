"""UCT with progressive widening (`uct`): descend by UCB1 from the root, expand where widening allows.

Sources: Kocsis & Szepesvári, "Bandit based Monte-Carlo Planning" (ECML
2006): UCT, UCB1 at every node of the descent; progressive widening:
Coulom, "Computing Elo Ratings of Move Patterns in the Game of Go" (2007)
and Couëtoux et al., "Continuous Upper Confidence Trees" (LION 2011): a node
visited N times may have at most ceil(C N^alpha) children.

Descent from the root. At node v, with N_v its clade's evaluations
(`n_clade_evals`):
- if v has fewer than C N_v^alpha valid children (progressive widening), or
  none of its children can be descended into, expand v;
- else move to the child c (settled: valid, evaluated, nothing open or in
  flight, so a node still being evaluated is neither entered nor expanded)
  with the largest
      Q_c + c_uct sqrt(ln N_v / N_c),
  Q_c = S_c / (S_c + F_c), the mean of every evaluation in c's clade, and N_c
  its clade's evaluations; ties to the older child.
With continuous evidence w > 1 (search.evidence: one evaluation worth w
Bernoulli trials) Q_c is the clade's best mean (search.evidence.clade_best)
and the bonus c_uct sqrt(ln N_v / (w N_c)).
Value: the clade mean, not the node's own mean. In UCT the value of a move is
the mean return of every simulation that went through it; here an
evaluation of any descendant of c is such a simulation, and a move into c is
worth what the search finds below c (clade-metaproductivity, as HGM argues),
not only c itself. Defaults: c_uct = sqrt(2) (UCB1, rewards in [0, 1]),
C = 1, alpha = 0.5. Children counted for widening: valid ones (an invalid
child takes no evaluation; counting it would stop widening at a node whose
mutations keep failing), those still being evaluated included.
Expansion vs evaluation: the shared loop of search.generational (each new
child is evaluated on every dev instance before the next descent, its
"rollouts"). Deterministic: no randomness in the descent.
Departures: expansions in flight are not seen (the scheduler may ask again
before the child exists, and the same node is widened twice). Final
choice: HGM's epsilon-quantile rule by default (selectable, search.final).
Cost: O(depth x children per node) per descent, children lists kept in the
tree's derived cache.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from search.decisions import Decision, FinalChoice
from search.evidence import clade_best
from search.final import epsilon_quantile
from search.generational import generational_decide, is_settled, settled_among
from search.tree import TreeView


@dataclass
class Children:
    """Each node's children ids, in id order, kept up to date with the tree (new nodes only)."""

    known: int = 0
    lists: list = field(default_factory=list)

    def sync(self, parent: np.ndarray, n: int) -> None:
        for node in range(self.known, n):
            self.lists.append([])
            p = int(parent[node])
            if p >= 0:
                self.lists[p].append(node)
        self.known = max(self.known, n)


def children_cache(view: TreeView) -> Children:
    cache: Children = view.derived_cache("children-lists", lambda tree: Children())
    cache.sync(view.parent, view.n)
    return cache


@dataclass(frozen=True)
class UCTPolicy:
    name: str = "uct"
    c: float = math.sqrt(2.0)  # UCB1's exploration constant
    widening_c: float = 1.0  # progressive widening: at most widening_c N^widening_alpha children
    widening_alpha: float = 0.5
    epsilon: float = 0.1  # the final rule's quantile

    def ucb(self, view: TreeView, node: int) -> tuple[np.ndarray, np.ndarray]:
        """(the node's children one can descend into: settled ones; their UCB1 scores)."""
        kids = np.asarray(children_cache(view).lists[node], dtype=np.int64)
        if len(kids):
            kids = kids[settled_among(view, kids)]
        if len(kids) == 0:
            return kids, np.zeros(0)
        n_v = max(int(view.n_clade_evals[node]), 1)
        n_c = view.n_clade_evals[kids].astype(np.float64)
        if view.evidence > 1.0:  # continuous evidence: the clade's best mean (search.evidence.clade_best)
            q = clade_best(view)[kids]
        else:
            q = view.S[kids] / (view.S[kids] + view.F[kids])
        # continuous evidence w (search.evidence): an evaluation's variance is 1/w of a Bernoulli trial's,
        # and UCB's confidence width shrinks with its square root
        return kids, q + self.c * np.sqrt(math.log(n_v) / (view.evidence * n_c))

    def widens(self, view: TreeView, node: int) -> bool:
        """Progressive widening: fewer valid children than widening_c N^widening_alpha."""
        n_v = int(view.n_clade_evals[node])
        return view.n_valid_children[node] < self.widening_c * n_v**self.widening_alpha

    def descend(self, view: TreeView) -> tuple[int, list[int], str] | None:
        """(the node to expand, the path from the root, why) or None when the root cannot be expanded."""
        if view.n == 0 or not is_settled(view, 0):
            return None
        node, path = 0, [0]
        while True:
            if self.widens(view, node):
                return node, path, "progressive widening"
            kids, scores = self.ucb(view, node)
            if len(kids) == 0:
                return node, path, "no child to descend into"
            node = int(kids[int(np.argmax(scores))])
            path.append(node)

    def parent(self, view: TreeView, rng: np.random.Generator) -> tuple[int, dict] | None:
        found = self.descend(view)
        if found is None:
            return None
        node, path, why = found
        return node, {
            "rule": f"uct: {why}",
            "depth": len(path) - 1,
            "path": path[-8:],
            "N": int(view.n_clade_evals[node]),
            "children": int(view.n_valid_children[node]),
        }

    def scores(self, view: TreeView) -> np.ndarray:
        """Each node's UCT value Q = S / (S + F), the clade mean (NaN without evaluations)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return view.S / (view.S + view.F)

    def decide(self, view: TreeView, rng: np.random.Generator) -> Decision | None:
        return generational_decide(view, rng, self.parent)

    def select_final(self, view: TreeView, rng: np.random.Generator) -> FinalChoice | None:
        return epsilon_quantile(view, self.epsilon)
