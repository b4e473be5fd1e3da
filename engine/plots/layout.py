"""A tidy tree layout, root on top, computed here (no graphviz).

Leaf order: a depth-first walk (children in the order they were made) gives
each leaf the next slot on the x axis; a parent sits midway between its first
and last child; y is minus the depth. Subtrees take disjoint x ranges, so no
two nodes or edges cross. A leaf may take a narrower slot (`leaf_width`), which
is how the lineage plot squeezes the small leaves of a large tree. Iterative,
so a chain of 10,000 nodes is as fine as a bush.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence


def tidy_tree(
    parents: Mapping[int, int | None], leaf_width: Callable[[int], float] | None = None
) -> dict[int, tuple[float, float]]:
    """node -> (x, y) for a forest given as node -> parent (None for a root).

    Children are visited in increasing id; roots likewise, side by side.
    A node whose parent is missing from `parents` is treated as a root."""
    children: dict[int, list[int]] = {n: [] for n in parents}
    roots: list[int] = []
    for node in sorted(parents):
        parent = parents[node]
        if parent is None or parent not in children:
            roots.append(node)
        else:
            children[parent].append(node)
    width = leaf_width or (lambda _node: 1.0)
    pos: dict[int, tuple[float, float]] = {}
    cursor = 0.0
    for root in roots:
        # (node, depth, expanded?) on an explicit stack: post-order without recursion
        stack: list[tuple[int, int, bool]] = [(root, 0, False)]
        while stack:
            node, depth, expanded = stack.pop()
            kids = children[node]
            if not kids:
                w = float(width(node))
                pos[node] = (cursor + w / 2.0, float(-depth))
                cursor += w
            elif expanded:
                pos[node] = ((pos[kids[0]][0] + pos[kids[-1]][0]) / 2.0, float(-depth))
            else:
                stack.append((node, depth, True))
                stack.extend((kid, depth + 1, False) for kid in reversed(kids))
    return pos


def path_to_root(parents: Mapping[int, int | None], node: int) -> Sequence[int]:
    """The nodes from the root down to `node` (inclusive)."""
    path = []
    current: int | None = node
    seen = set()
    while current is not None and current in parents and current not in seen:
        seen.add(current)
        path.append(current)
        current = parents[current]
    return path[::-1]
