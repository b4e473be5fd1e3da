"""Hand-built trees for the policies' formula tests: nodes with exact dev scores, worked out by hand."""

from __future__ import annotations

from search.tree import TreeStats

# A node's mean dev score -> its scores on 4 dev instances.
SCORES = {0.0: [0, 0, 0, 0], 0.25: [1, 0, 0, 0], 0.5: [1, 1, 0, 0], 0.75: [1, 1, 1, 0], 1.0: [1, 1, 1, 1]}


def add(tree: TreeStats, parent: int | None, mean: float | None, valid: bool = True, feature: float = 0.0) -> int:
    """A node under `parent` evaluated on every instance to `mean` (None: not evaluated)."""
    node = tree.add_node(parent, valid, feature=feature)
    if mean is not None:
        for i, x in enumerate(SCORES[mean]):
            tree.finish_evaluation(node, i, x, started=False)
    return node


def rooted(n: int) -> TreeStats:
    """A tree of `n` dev instances holding only its root, scored 0.5 on each."""
    tree = TreeStats(n)
    tree.add_node(None, True)
    for i in range(n):
        tree.finish_evaluation(0, i, 0.5, started=False)
    return tree
