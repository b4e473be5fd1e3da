"""progress_data and group_series: best-so-far, the final rule replayed, dollars, and config groups."""

from __future__ import annotations

import duckdb
import numpy as np
import pytest

from archive import ArchiveError
from engine.plots.progress import group_series, progress_data
from engine.plots.synthetic import synthetic_archive


def _sql(run, query):
    with duckdb.connect(str(run / "archive.duckdb"), read_only=True) as con:
        return con.execute(query).fetchall()


def test_small_run_best_so_far_and_final_rule_match_the_archive(small_run):
    (s,) = progress_data([small_run])
    n_dev = _sql(small_run, "SELECT count(*) FROM instances WHERE split = 'dev'")[0][0]
    rows = _sql(
        small_run,
        "SELECT node_id, score FROM evaluations WHERE split = 'dev' ORDER BY finished_at, node_id, instance_id",
    )
    assert len(s.evals) == len(rows) and list(s.evals) == list(range(1, len(rows) + 1))
    assert s.min_evals == n_dev
    # best-so-far, recomputed here from the rows: the best mean of nodes with every dev instance done
    sums, counts, expected = {}, {}, []
    for node, score in rows:
        sums[node] = sums.get(node, 0.0) + score
        counts[node] = counts.get(node, 0) + 1
        complete = [sums[n] / counts[n] for n in counts if counts[n] >= n_dev]
        expected.append(max(complete) if complete else np.nan)
    np.testing.assert_allclose(s.best, expected)
    defined = s.best[~np.isnan(s.best)]
    assert len(defined) and np.all(np.diff(defined) >= 0)  # complete nodes' means never move
    # the final rule replayed on the whole tree picks the node the run picked
    (final,) = _sql(small_run, "SELECT node_id FROM events WHERE kind = 'select_final'")[0]
    assert s.final_node[-1] == final
    mean = _sql(small_run, f"SELECT avg(score) FROM evaluations WHERE split = 'dev' AND node_id = {final}")[0][0]
    assert s.final[-1] == pytest.approx(mean)
    assert s.final_rule.startswith("hgm: highest 0.1-quantile")
    assert not s.has_cost and np.all(s.dollars == 0)


def test_dollars_accumulate_llm_calls_made_before_each_evaluation(synthetic_run):
    (s,) = progress_data([synthetic_run])
    assert s.has_cost
    assert np.all(np.diff(s.dollars) >= 0)
    calls = _sql(synthetic_run, "SELECT created_at, cost_usd FROM llm_calls ORDER BY created_at")
    ends = [
        r[0]
        for r in _sql(
            synthetic_run,
            "SELECT finished_at FROM evaluations WHERE split = 'dev' ORDER BY finished_at, node_id, instance_id",
        )
    ]
    for t in (0, len(ends) // 2, len(ends) - 1):
        assert s.dollars[t] == pytest.approx(sum(c for at, c in calls if at <= ends[t]))
    assert s.dollars[-1] <= sum(c for _, c in calls) + 1e-12


def test_fewer_required_evaluations_never_lowers_best_so_far(synthetic_run):
    (strict,) = progress_data([synthetic_run])
    (loose,) = progress_data([synthetic_run], min_evals=1)
    assert loose.min_evals == 1
    both = ~np.isnan(strict.best)
    assert np.all(loose.best[both] >= strict.best[both] - 1e-12)
    assert np.isnan(strict.best).sum() >= np.isnan(loose.best).sum()


def test_runs_that_share_a_config_get_a_mean_and_band(tmp_path):
    paths = [synthetic_archive(tmp_path / f"s{seed}.duckdb", n_nodes=50, seed=seed, n_dev=4) for seed in (1, 2)]
    other = synthetic_archive(tmp_path / "offline.duckdb", n_nodes=30, seed=3, n_dev=4, llm=False)
    series = progress_data([*paths, other], max_points=50)
    assert series[0].config_key == series[1].config_key != series[2].config_key
    groups = group_series(series)
    assert [len(g.members) for g in groups] == [2, 1]
    pooled = groups[0]
    length = min(len(series[0].evals), len(series[1].evals))
    assert len(pooled.evals) == length
    stack = np.vstack([series[0].best[:length], series[1].best[:length]])
    full = ~np.isnan(stack).any(axis=0)
    np.testing.assert_allclose(pooled.best_mean[full], stack[:, full].mean(axis=0))
    np.testing.assert_allclose(pooled.best_sd[full], stack[:, full].std(axis=0))
    assert np.all(np.isnan(pooled.best_mean[~full]))
    assert "2 runs" in pooled.label and "mutator=llm" in pooled.label
    assert len(groups[1].evals) == 0  # a single run: drawn alone


def test_final_rule_is_replayed_at_most_max_points_times_and_held_between(synthetic_run):
    (s,) = progress_data([synthetic_run], max_points=5)
    changes = np.flatnonzero(np.diff(s.final_node) != 0)
    assert len(changes) <= 5


def test_a_path_that_is_not_an_archive_is_one_clear_error(tmp_path, small_run):
    with pytest.raises(ArchiveError):
        progress_data([small_run, tmp_path / "nothing"])
