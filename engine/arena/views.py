"""One population of the arena as the mutators see a run: a RunState over the whole archive.

Node ids are shared by both populations, so each view's tree holds every
node (ids line up with the archive's), but only its own role's valid nodes
are valid in it: the other population is never a parent, donor or
inspiration. Code agents' sums are their dev evaluations (the grown set
included); a tester's is its mean arena score, as one evaluation. Rebuilt
from the archive whenever a child is made, so nothing here outlives a round.
"""

from __future__ import annotations

from collections import defaultdict

from engine.loop.state import RunState
from search.tree import TreeStats
from tasks.base import Instance


def role_view(archive, task, role: str) -> RunState:
    """The RunState whose expansions make children of `role` ('agent' or 'tester'); `task` is that role's."""
    instances = [Instance(i, s, d) for i, s, d in archive.instances()]
    dev = [x for x in instances if x.split == "dev"]
    holdout = [x for x in instances if x.split == "holdout"]
    state = RunState(archive, task, dev, holdout, TreeStats(len(dev) if role == "agent" else 1), role=role)
    sizes = archive.code_sizes()
    for node in archive.nodes():
        mine = node.role == role
        state.tree.add_node(node.parent_id, mine and node.status == "valid", feature=float(sizes.get(node.id, 0)))
        if mine:
            state.code_hashes.setdefault(node.code_hash, node.id)
    if role == "agent":
        index = state.dev_index
        for node, instance, score in archive.first_dev_scores():
            state.tree.finish_evaluation(node, index[instance], score, started=False)
    else:
        scores: dict[int, list[float]] = defaultdict(list)
        for node, score in archive.scores_of_split("arena"):
            scores[node].append(score)
        for node, got in scores.items():
            state.tree.finish_evaluation(node, 0, sum(got) / len(got), started=False)
    return state
