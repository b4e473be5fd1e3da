"""Incremental clade sums equal a brute-force recompute after any sequence of events."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from search.tree import TreeStats, recompute_clade_sums

N_INSTANCES = 5

# An operation: ("node", parent choice, valid) or ("eval", node choice, instance, score) or ("abandon", ...)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("node"), st.integers(0, 10**6), st.booleans()),
        st.tuples(
            st.just("eval"),
            st.integers(0, 10**6),
            st.integers(0, N_INSTANCES - 1),
            st.floats(0.0, 1.0, allow_nan=False),
        ),
        st.tuples(st.just("start"), st.integers(0, 10**6), st.integers(0, N_INSTANCES - 1)),
        st.tuples(st.just("abandon"), st.integers(0, 10**6)),
    ),
    max_size=120,
)


def brute_force_n_clade(parent: np.ndarray, n_evals: np.ndarray) -> np.ndarray:
    """Count every node's subtree evaluations by walking each node up to the root."""
    counts = np.zeros(len(parent), dtype=np.int64)
    for node in range(len(parent)):
        current = node
        while current >= 0:
            counts[current] += n_evals[node]
            current = parent[current]
    return counts


@settings(max_examples=200, deadline=None)
@given(operations)
def test_incremental_sums_equal_recompute(ops):
    tree = TreeStats(N_INSTANCES, capacity=2)  # tiny capacity: growth is exercised too
    tree.add_node(None, True)
    in_flight: list[tuple[int, int]] = []
    for op in ops:
        if op[0] == "node":
            tree.add_node(op[1] % tree.n, op[2])
        elif op[0] in ("eval", "start"):
            node, instance = op[1] % tree.n, op[2]
            if not tree.valid[node] or tree.is_tried(node, instance):
                continue
            if op[0] == "eval":
                tree.start_evaluation(node, instance)
                tree.finish_evaluation(node, instance, op[3])
            else:
                tree.start_evaluation(node, instance)
                in_flight.append((node, instance))
        elif in_flight:
            node, instance = in_flight.pop(op[1] % len(in_flight))
            tree.abandon_evaluation(node, instance)
    n = tree.n
    S, F = recompute_clade_sums(tree.parent[:n], tree.s[:n], tree.f[:n])
    np.testing.assert_allclose(tree.S[:n], S, atol=1e-9)
    np.testing.assert_allclose(tree.F[:n], F, atol=1e-9)
    assert (tree.n_clade_evals[:n] == brute_force_n_clade(tree.parent[:n], tree.n_evals[:n])).all()
    assert tree.in_flight == len(in_flight)
    per_node = np.bincount([node for node, _ in in_flight], minlength=n)
    assert (tree.n_in_flight[:n] == per_node).all()
    assert tree.evaluations_done == int(tree.n_evals[:n].sum())
    # open nodes: valid with an instance neither done nor in flight
    expected_open = {i for i in range(n) if tree.valid[i] and tree.untried(i)}
    assert tree.open_nodes == expected_open


def test_view_is_read_only():
    tree = TreeStats(3)
    tree.add_node(None, True)
    view = tree.view()
    with pytest.raises(ValueError):
        view.S[0] = 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.n = 5  # frozen dataclass


def test_double_start_is_refused():
    tree = TreeStats(2)
    tree.add_node(None, True)
    tree.start_evaluation(0, 1)
    with pytest.raises(ValueError):
        tree.start_evaluation(0, 1)


def test_score_is_split_into_successes_and_failures():
    tree = TreeStats(2)
    tree.add_node(None, True)
    child = tree.add_node(0, True)
    tree.finish_evaluation(child, 0, 0.75, started=False)
    assert tree.s[child] == pytest.approx(0.75) and tree.f[child] == pytest.approx(0.25)
    assert tree.S[0] == pytest.approx(0.75) and tree.F[0] == pytest.approx(0.25)
    assert tree.s[0] == 0.0


def test_feature_is_stored_per_node_and_in_the_view():
    tree = TreeStats(2, capacity=1)
    tree.add_node(None, True, feature=1234.0)
    tree.add_node(0, False)
    tree.add_node(0, True, feature=56.5)
    assert list(tree.view().feature) == [1234.0, 0.0, 56.5]


def test_in_flight_per_node():
    tree = TreeStats(3)
    tree.add_node(None, True)
    tree.start_evaluation(0, 0)
    tree.start_evaluation(0, 2)
    assert tree.view().n_in_flight[0] == 2
    tree.finish_evaluation(0, 0, 1.0)
    tree.abandon_evaluation(0, 2)
    tree.finish_evaluation(0, 1, 1.0, started=False)
    assert tree.view().n_in_flight[0] == 0 and tree.n_evals[0] == 2


def test_each_watcher_drains_its_own_change_log():
    tree = TreeStats(2)
    tree.add_node(None, True)
    tree.watch_changes()
    tree.watch_changes("mine")
    child = tree.add_node(0, True)
    tree.finish_evaluation(child, 0, 0.5, started=False)
    assert tree.drain_changes() == [child, child]
    assert tree.drain_changes() == []
    assert tree.drain_changes("mine") == [child, child]
    assert tree.drain_changes("never watched") == []
