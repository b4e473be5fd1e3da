"""ShinkaEvolve's parent selection strategies: `shinka` (weighted), `shinka_power_law`, `shinka_beam`.

Source: Lange, Imajuku, Cetin, "ShinkaEvolve: Towards Open-Ended and
Sample-Efficient Program Evolution", arXiv 2509.19349, and its public code
(SakanaAI/ShinkaEvolve, `shinka/database/parents.py`: WeightedSamplingStrategy,
PowerLawSamplingStrategy, BeamSearchSamplingStrategy; defaults from
`shinka/database/dbase.py` DatabaseConfig).

Candidates (all three): the archive, ShinkaEvolve's elite set of at most
`archive_size` = 40 correct programs, kept by fitness: a program enters when
the archive has room or it beats the archive's worst. With scores that no
longer change once a node is settled, that is the `archive_size` settled
nodes with the highest mean dev score (ties to the older node). a_i is the
node's mean dev score (ShinkaEvolve's `combined_score`).

- `shinka` (strategy "weighted", the default): over the archive,
      w_i = sigmoid(lambda (a_i - median(a)) / max(MAD(a), 1e-6)) / (1 + n_i),
  lambda = 10 (`parent_selection_lambda`), median and MAD (median absolute
  deviation from the median) over the archive's scores, n_i the node's
  children; p_i = w_i / sum w (uniform if every weight is 0). When MAD = 0
  (e.g. half the archive shares one score) the scale is 1e-6, as in the
  source: the sigmoid is then ~1 above the median, 1/2 at it, ~0 below.
- `shinka_power_law`: the archive sorted best first (ties: older first),
  p_r proportional to r^(-alpha) for rank r = 1, 2, ..., alpha = 1
  (`exploitation_alpha`; 0 is uniform, large values hill-climb).
- `shinka_beam` (strategy "beam_search"): lock onto a parent until it has
  `num_beams` = 5 children, then switch to the best program (which may be the
  same one, expanded again). ShinkaEvolve keeps the locked parent in its
  metadata; here it is read from the tree: the parent of the newest node is
  the parent being worked on (the first expansion, or one whose parent is
  no longer a candidate, takes the best). Deterministic.
Children n_i: ShinkaEvolve counts every program stored with that parent,
correct or not, but a patch that fails to apply or compile is retried and
never stored: here, valid children (`n_valid_children`), those still being
evaluated included (expansions in flight are not seen).
Departures: one island (ShinkaEvolve defaults to 2 islands with no
migration; islands are OpenEvolve's feature here, `openevolve`), unless
`island_stagnation` spawns more (search/shinka_islands.py; not for
`shinka_beam`, which follows one beam); the
archive's "fitness" strategy only (not "crowding"). Expansion vs evaluation:
the shared loop of search.generational. Final choice: HGM's epsilon-quantile
rule by default (selectable, search.final).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from search.decisions import Decision, FinalChoice
from search.dgm import sigmoid
from search.final import epsilon_quantile
from search.generational import (
    generational_decide,
    is_settled,
    sample_index,
    settled,
    settled_mask,
    top_k,
)
from search.shinka_islands import ShinkaIslands, shinka_islands
from search.tree import TreeView

MAD_FLOOR = 1e-6


def archive(view: TreeView, size: int, among: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(nodes in id order, their mean scores): the `size` settled nodes with the highest means (`among`: of
    these nodes only, a boolean over every node: an island's members)."""
    nodes = settled(view)
    if among is not None and among[nodes].any():  # an island with no settled member draws from every island
        nodes = nodes[among[nodes]]
    a = view.mean(nodes)
    keep = top_k(nodes, a, size)
    return keep, view.mean(keep)


def _spread(view: TreeView, probabilities_of: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    out = np.zeros(view.n)
    out[nodes] = probabilities_of
    return out


@dataclass(frozen=True)
class _Shinka:
    archive_size: int = 40
    epsilon: float = 0.1  # the final rule's quantile
    island_stagnation: int | None = None  # S: islands spawned on stagnation (search/shinka_islands.py)
    rule: ClassVar[str]  # the selection rule in words, stored with each decision

    def __post_init__(self) -> None:
        if self.island_stagnation is not None and self.island_stagnation < 1:
            raise ValueError(f"island_stagnation must be 1 or more expansions, not {self.island_stagnation}")

    def _probabilities(self, view: TreeView, nodes: np.ndarray, a: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def islands(self, view: TreeView) -> ShinkaIslands | None:
        """The islands (with `island_stagnation`), else None: one island, the whole archive."""
        if self.island_stagnation is None:
            return None
        return shinka_islands(view, settled_mask(view), self.island_stagnation)

    def _archive(self, view: TreeView) -> tuple[np.ndarray, np.ndarray, dict]:
        """The archive the next parent is drawn from (the island of the turn's, with islands), and what the
        decision says about the island."""
        islands = self.islands(view)
        if islands is None:
            nodes, a = archive(view, self.archive_size)
            return nodes, a, {}
        child = view.n + view.pending_expansions
        island = islands.turn(child)
        nodes, a = archive(view, self.archive_size, islands.members(island))
        said: dict = {"island": island, "islands": len(islands.seeds)}
        spawn = next((x for x in islands.spawns if x.island == island), None)
        if spawn is not None and child == spawn.at + 1:  # the new island's first expansion: the loop records it
            said["island_spawn"] = spawn.record()
        return nodes, a, said

    def probabilities(self, view: TreeView) -> np.ndarray:
        """Each node's probability of being the next parent, over every node (0 outside the archive)."""
        nodes, a, _ = self._archive(view)
        if len(nodes) == 0:
            return np.zeros(view.n)
        return _spread(view, self._probabilities(view, nodes, a), nodes)

    def parent(self, view: TreeView, rng: np.random.Generator) -> tuple[int, dict] | None:
        nodes, a, said = self._archive(view)
        if len(nodes) == 0:
            return None
        p = self._probabilities(view, nodes, a)
        k = sample_index(p, rng)
        node = int(nodes[k])
        return node, {
            "rule": self.rule,
            "p": float(p[k]),
            "a": float(a[k]),
            "children": int(view.n_valid_children[node]),
            "archive": len(nodes),
            **said,
        }

    def decide(self, view: TreeView, rng: np.random.Generator) -> Decision | None:
        return generational_decide(view, rng, self.parent)

    def select_final(self, view: TreeView, rng: np.random.Generator) -> FinalChoice | None:
        return epsilon_quantile(view, self.epsilon)


@dataclass(frozen=True)
class ShinkaWeightedPolicy(_Shinka):
    name: str = "shinka"
    sharpness: float = 10.0  # lambda, ShinkaEvolve's parent_selection_lambda
    rule = "sigmoid(lambda (a - median) / MAD) / (1 + children)"

    def weights(self, view: TreeView) -> np.ndarray:
        """The unnormalized weights w_i over every node (0 outside the archive)."""
        nodes, a, _ = self._archive(view)
        return _spread(view, self._weights(view, nodes, a), nodes) if len(nodes) else np.zeros(view.n)

    def _weights(self, view: TreeView, nodes: np.ndarray, a: np.ndarray) -> np.ndarray:
        median = float(np.median(a))
        scale = max(float(np.median(np.abs(a - median))), MAD_FLOOR)
        return sigmoid(self.sharpness * (a - median) / scale) / (1.0 + view.n_valid_children[nodes])

    def _probabilities(self, view: TreeView, nodes: np.ndarray, a: np.ndarray) -> np.ndarray:
        w = self._weights(view, nodes, a)
        total = w.sum()
        return w / total if total > 0 else np.full(len(w), 1.0 / len(w))


@dataclass(frozen=True)
class ShinkaPowerLawPolicy(_Shinka):
    name: str = "shinka_power_law"
    alpha: float = 1.0  # ShinkaEvolve's exploitation_alpha
    rule = "rank^(-alpha) over the archive"

    def _probabilities(self, view: TreeView, nodes: np.ndarray, a: np.ndarray) -> np.ndarray:
        order = np.argsort(-a, kind="stable")  # best first, ties to the older node (nodes are in id order)
        rank = np.empty(len(a))
        rank[order] = np.arange(1, len(a) + 1)
        w = rank ** (-self.alpha)
        return w / w.sum()


@dataclass(frozen=True)
class ShinkaBeamPolicy:
    name: str = "shinka_beam"
    num_beams: int = 5
    epsilon: float = 0.1

    def beam_parent(self, view: TreeView) -> tuple[int, str] | None:
        """(the parent to expand, why): the locked parent while it has fewer than num_beams children, else
        the best settled node (highest mean, ties to the older)."""
        nodes = settled(view)
        if len(nodes) == 0:
            return None
        locked = int(view.parent[view.n - 1]) if view.n > 1 else -1
        if locked >= 0 and is_settled(view, locked) and view.n_valid_children[locked] < self.num_beams:
            return locked, "continue the beam"
        best = int(nodes[int(np.argmax(view.mean(nodes)))])  # the first maximum: ties to the older
        return best, "switch to the best"

    def probabilities(self, view: TreeView) -> np.ndarray:
        out = np.zeros(view.n)
        choice = self.beam_parent(view)
        if choice is not None:
            out[choice[0]] = 1.0
        return out

    def parent(self, view: TreeView, rng: np.random.Generator) -> tuple[int, dict] | None:
        choice = self.beam_parent(view)
        if choice is None:
            return None
        node, why = choice
        return node, {
            "rule": f"beam search: {why}",
            "children": int(view.n_valid_children[node]),
            "num_beams": self.num_beams,
            "a": view.mean(node),
        }

    def decide(self, view: TreeView, rng: np.random.Generator) -> Decision | None:
        return generational_decide(view, rng, self.parent)

    def select_final(self, view: TreeView, rng: np.random.Generator) -> FinalChoice | None:
        return epsilon_quantile(view, self.epsilon)
