"""lineage_data: the numbers the lineage plot draws, checked against the archive with SQL."""

from __future__ import annotations

import hashlib
import math

import duckdb
import pytest

from archive import ArchiveError
from engine.plots.lineage import lineage_data


def _sql(run, query):
    with duckdb.connect(str(run / "archive.duckdb"), read_only=True) as con:
        return con.execute(query).fetchall()


def test_small_run_nodes_scores_and_final_path_match_the_archive(small_run):
    data = lineage_data(small_run)
    rows = _sql(small_run, "SELECT id, parent_id, depth, status FROM nodes ORDER BY id")
    assert [(n.id, n.parent, n.depth, n.status) for n in data.nodes] == rows
    means = {
        n: (m, c)
        for n, m, c in _sql(
            small_run, "SELECT node_id, avg(score), count(*) FROM evaluations WHERE split = 'dev' GROUP BY node_id"
        )
    }
    for node in data.nodes:
        mean, count = means.get(node.id, (None, 0))
        assert node.n_evals == count
        assert (node.mean is None and mean is None) or node.mean == pytest.approx(mean)
    (final,) = _sql(small_run, "SELECT node_id FROM events WHERE kind = 'select_final'")[0]
    assert data.final_node == final and data.node(final).is_final
    assert sum(n.is_final for n in data.nodes) == 1
    path, current = [], final
    while current is not None:
        path.append(current)
        current = data.node(current).parent
    assert {n.id for n in data.nodes if n.on_final_path} == set(path)
    assert data.final_rule
    assert len(data.edges) == len(data.nodes) - 1
    assert all((data.node(c).parent, c) == (p, c) for p, c in data.edges)
    root = data.node(0)
    assert root.y == 0.0 and all(n.y == -n.depth for n in data.nodes)  # root on top
    assert data.fade_below == 0 and not any(n.faded for n in data.nodes)
    assert all(n.labelled for n in data.nodes)  # a small tree labels every node


def test_hover_text_names_node_change_mean_and_evaluations(small_run):
    data = lineage_data(small_run)
    root = data.node(0)
    assert root.hover == f"node 0: {root.description}, mean {root.mean:.3f}, {root.n_evals} evals"
    final = data.node(data.final_node)
    assert final.hover.startswith(f"node {final.id}: ") and final.hover.endswith("evals, final node")


def test_reading_leaves_the_archive_unchanged(small_run):
    before = hashlib.sha256((small_run / "archive.duckdb").read_bytes()).hexdigest()
    lineage_data(small_run / "archive.duckdb")  # the file itself works as well as the folder
    assert hashlib.sha256((small_run / "archive.duckdb").read_bytes()).hexdigest() == before


def test_invalid_and_failed_children_keep_their_status_and_reason(synthetic_run):
    data = lineage_data(synthetic_run)
    statuses = {n.status for n in data.nodes}
    assert {"valid", "invalid", "failed"} <= statuses
    for node in data.nodes:
        if node.status != "valid":
            assert node.mean is None and node.n_evals == 0
            assert f"synthetic {node.status} child" in node.description
            assert f"({node.status})" in node.hover
    failed_evals = _sql(
        synthetic_run,
        "SELECT node_id, count(*) FROM evaluations WHERE split = 'dev' AND status <> 'ok' GROUP BY node_id",
    )
    assert failed_evals
    for node, count in failed_evals:
        assert data.node(node).n_failed_evals == count


def test_a_large_tree_fades_small_nodes_and_labels_only_the_best_and_the_final_path(large_synthetic_run):
    data = lineage_data(large_synthetic_run, max_labels=7)
    assert len(data.nodes) == 400
    assert data.fade_below >= 2
    faded = [n for n in data.nodes if n.faded]
    assert faded and len(faded) < len(data.nodes)
    for node in data.nodes:
        small = node.status != "valid" or node.n_evals < data.fade_below
        assert node.faded == (small and not node.on_final_path)
    path = {n.id for n in data.nodes if n.on_final_path}
    labelled = {n.id for n in data.nodes if n.labelled}
    assert path <= labelled and len(labelled - path) <= 7
    best = sorted((n for n in data.nodes if not n.faded and n.mean is not None), key=lambda n: (-n.mean, n.id))
    assert {n.id for n in best[:7]} <= labelled
    # faded leaves take narrow slots: the tree is narrower than one slot per leaf
    leaves = {n.id for n in data.nodes} - {p for p, _ in data.edges}
    width = max(n.x for n in data.nodes) - min(n.x for n in data.nodes)
    assert width < len(leaves) - 1
    assert all(math.isfinite(n.x) for n in data.nodes)


@pytest.mark.parametrize(
    "make",
    [
        lambda tmp: tmp / "missing",
        lambda tmp: tmp,  # a folder without an archive
        lambda tmp: (tmp / "notes.txt", (tmp / "notes.txt").write_text("not an archive"))[0],
    ],
)
def test_a_path_that_is_not_an_archive_is_one_clear_error(tmp_path, make):
    with pytest.raises(ArchiveError) as info:
        lineage_data(make(tmp_path))
    assert "\n" not in str(info.value) and "archive" in str(info.value)
