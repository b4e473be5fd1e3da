"""The tidy tree layout: root on top, parents over their children, subtrees apart, no recursion."""

from __future__ import annotations

import itertools

import pytest

from engine.plots.layout import path_to_root, tidy_tree


def _random_tree(n: int, seed: int) -> dict[int, int | None]:
    import numpy as np

    rng = np.random.default_rng(seed)
    return {0: None, **{i: int(rng.integers(0, i)) for i in range(1, n)}}


def _subtree(parents: dict[int, int | None], root: int) -> set[int]:
    kids: dict[int, list[int]] = {}
    for n, p in parents.items():
        if p is not None:
            kids.setdefault(p, []).append(n)
    out, stack = set(), [root]
    while stack:
        node = stack.pop()
        out.add(node)
        stack.extend(kids.get(node, []))
    return out


def test_small_tree_places_root_on_top_and_parents_midway():
    parents = {0: None, 1: 0, 2: 0, 3: 1, 4: 1, 5: 2}
    pos = tidy_tree(parents)
    assert pos[0][1] == 0.0 and all(pos[n][1] == -d for n, d in ((1, 1), (2, 1), (3, 2), (4, 2), (5, 2)))
    assert [pos[n][0] for n in (3, 4, 5)] == [0.5, 1.5, 2.5]  # leaves in depth-first order, one slot each
    assert pos[1][0] == 1.0 and pos[2][0] == 2.5  # midway between first and last child
    assert pos[0][0] == (pos[1][0] + pos[2][0]) / 2


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_subtrees_take_disjoint_x_ranges(seed):
    parents = _random_tree(300, seed)
    pos = tidy_tree(parents)
    assert set(pos) == set(parents)
    for node, parent in parents.items():
        if parent is not None:
            assert pos[node][1] == pos[parent][1] - 1
    children = [n for n, p in parents.items() if p == 0]
    spans = sorted(
        (min(pos[m][0] for m in _subtree(parents, c)), max(pos[m][0] for m in _subtree(parents, c))) for c in children
    )
    for (_, right), (left, _) in itertools.pairwise(spans):
        assert right < left
    points = [pos[n] for n in parents]
    assert len(set(points)) == len(points)  # no two nodes on one spot


def test_a_deep_chain_needs_no_recursion():
    parents = {i: (None if i == 0 else i - 1) for i in range(20_000)}
    pos = tidy_tree(parents)
    assert pos[19_999] == (0.5, -19_999.0)


def test_leaf_width_squeezes_chosen_leaves_and_forests_sit_side_by_side():
    parents = {0: None, 1: 0, 2: 0, 3: 0, 10: None}
    narrow = tidy_tree(parents, lambda n: 0.2 if n == 2 else 1.0)
    assert narrow[2][0] - narrow[1][0] == pytest.approx(0.6)
    assert narrow[10][0] > narrow[3][0]  # the second root comes after the first tree


def test_path_to_root_goes_from_root_down():
    parents = {0: None, 1: 0, 2: 1, 3: 0}
    assert list(path_to_root(parents, 2)) == [0, 1, 2]
    assert list(path_to_root(parents, 0)) == [0]
