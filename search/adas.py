"""ADAS's Meta Agent Search as a policy (`adas`): every new agent is written from the root, seeing the archive.

Source: Hu, Lu, Clune, "Automated Design of Agentic Systems", arXiv 2408.08435,
and its public code (ShengranHu/ADAS, `_*/search.py`: `search`, n_generation
= 30, each new agent evaluated on the whole validation set, then appended
to the archive with its fitness, a bootstrap confidence interval of accuracy).
The meta-agent is shown the whole archive (every agent's code and fitness)
and writes a new agent; agents are not edited versions of one parent.

Here: every expansion's parent is the root (the seed), and the decision
carries `{"context": "archive"}` so the mutator shows the meta-agent the
archive of agents and their scores, not just the parent (engine side:
engine/loop/expansion.py `mutation_context`). Each child is evaluated on every
dev instance before it counts (the shared loop of search.generational: open
nodes are evaluated first, the oldest first).
Departures: ADAS is sequential (one agent written, evaluated, archived, then
the next); here a new agent may be written while earlier ones are still
being evaluated, whenever a worker would otherwise idle, so the meta-agent
sees the archive as it is at that moment. The number of generations is the
run's budget. ADAS's two reflexion rounds per agent are the mutator's
business. Final choice: the highest mean dev score among nodes with every dev
instance evaluated (ADAS reports its best agent by validation fitness);
selectable (search.final).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from search.decisions import Decision, FinalChoice
from search.final import max_mean_k
from search.generational import generational_decide, is_settled, settled
from search.tree import TreeView


@dataclass(frozen=True)
class ADASPolicy:
    name: str = "adas"

    def parent(self, view: TreeView, rng: np.random.Generator) -> tuple[int, dict] | None:
        if view.n == 0 or not is_settled(view, 0):
            return None
        return 0, {
            "rule": "meta agent search: a new agent from the root",
            "context": "archive",
            "archive": len(settled(view)),
        }

    def decide(self, view: TreeView, rng: np.random.Generator) -> Decision | None:
        return generational_decide(view, rng, self.parent)

    def select_final(self, view: TreeView, rng: np.random.Generator) -> FinalChoice | None:
        return max_mean_k(view)
