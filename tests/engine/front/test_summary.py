"""The summary warns when the seed scored 0 on every dev evaluation: a silent 0 (a missing data file) is said."""

from __future__ import annotations

import io

from rich.console import Console

from archive import Archive
from archive.records import EvaluationRecord, NodeRecord
from engine.front.summary import compute_summary, render_summary, seed_at_zero
from tasks.base import SCORE_NOTE


class OneInstance:
    """What the summary reads of a task (tasks.base.Task), its notes at the declared defaults."""

    raw_metric = "combined_score"
    raw_metric_note = ""
    score_note = SCORE_NOTE

    @staticmethod
    def raw_value(metrics):
        values = [float(m["metric"]) for m in metrics if "metric" in m]
        return sum(values) / len(values) if values else None


def _archive(tmp_path, seed_metrics: list[float]) -> Archive:
    archive = Archive.create(tmp_path / "archive.duckdb", "run", {}, 0)
    archive.add_instances([("task", "dev", {}), ("task_rerun", "holdout", {})])
    archive.add_node(NodeRecord(0, None, 0, "valid", "seed"), {"initial_program.py": "x = 1\n"})
    for k, m in enumerate(seed_metrics):
        archive.add_evaluation(
            EvaluationRecord(
                0,
                "task",
                "dev",
                k,
                0.5,
                {"metric": m},
                "ok",
                feedback=f"combined_score={m}; error: data/test.csv not found",
            )
        )
    return archive


def test_seed_at_zero_names_the_evaluators_feedback(tmp_path) -> None:
    with _archive(tmp_path, [0.0, 0.0]) as archive:
        assert seed_at_zero(archive, OneInstance()) == {
            "seed_zero": "combined_score=0.0; error: data/test.csv not found"
        }
        summary = compute_summary(archive, OneInstance(), 0, "max mean", "budget spent", 2)
    out = io.StringIO()
    render_summary(summary, Console(file=out, width=200))
    assert "Warning: the seed scored combined_score = 0 on every dev evaluation" in out.getvalue()
    assert "data/test.csv not found" in out.getvalue()


def test_no_warning_once_the_seed_scores(tmp_path) -> None:
    with _archive(tmp_path, [0.0, 0.25]) as archive:
        assert seed_at_zero(archive, OneInstance()) == {}
    with _archive(tmp_path / "b", [0.9]) as archive:
        summary = compute_summary(archive, OneInstance(), 0, "max mean", "budget spent", 1)
    out = io.StringIO()
    render_summary(summary, Console(file=out, width=200))
    assert "Warning" not in out.getvalue()
