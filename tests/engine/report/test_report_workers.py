"""The report's "Evaluations per worker over time": counts per worker and time bucket, drawn as inline SVG."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from archive import Archive, EvaluationRecord, NodeRecord
from engine.report.data import BUCKETS, report_data
from engine.report.page import render_page

EARLY, LATE = "ray:127.0.0.1/aaaa", "ray:127.0.0.1/bbbb"
T0 = datetime(2025, 1, 1, 12, 0, 0)


def _archive(tmp_path, workers: list[tuple[str, int, int]]) -> Archive:
    """An archive whose evaluations are (worker, started at second, finished at second)."""
    archive = Archive.create(tmp_path / "archive.duckdb", "workers-run", {"task": "toy", "budget": 8}, seed=0)
    archive.add_instances([(f"i{k}", "dev", {}) for k in range(max(len(workers), 1))])
    archive.add_node(NodeRecord(0, None, 0, "valid", "seed"), {"agent.py": "x = 1\n"})
    for k, (worker, start, end) in enumerate(workers):
        archive.add_evaluation(
            EvaluationRecord(
                0,
                f"i{k}",
                "dev",
                0,
                1.0,
                worker=worker,
                started_at=T0 + timedelta(seconds=start),
                finished_at=T0 + timedelta(seconds=end),
            )
        )
    return archive


def _section(html: str) -> str:
    match = re.search(r'<details class="cfg workers" open>.*?</details>', html, re.DOTALL)
    assert match
    return match.group(0)


def test_counts_per_worker_and_bucket_and_the_svg(tmp_path):
    evals = [(EARLY, s, s + 1) for s in (0, 2, 4)] + [(LATE, s, s + 2) for s in (90, 92, 94, 96, 98)]
    with _archive(tmp_path, evals) as archive:
        data = report_data(archive)
    part = data["workers"]
    assert [r["worker"] for r in part["rows"]] == [EARLY, LATE]
    assert [r["total"] for r in part["rows"]] == [3, 5]
    assert len(part["edges"]) == BUCKETS + 1 and part["edges"][0].startswith("2025-01-01 12:00:00")
    assert part["edges"][-1].startswith("2025-01-01 12:01:40")
    for row in part["rows"]:
        assert len(row["counts"]) == BUCKETS and sum(row["counts"]) == row["total"]
    early, late = (r["counts"] for r in part["rows"])
    last_early = max(i for i, c in enumerate(early) if c)
    first_late = min(i for i, c in enumerate(late) if c)
    assert last_early < first_late and sum(early[:2]) == 3 and late[-1] > 0  # 5 s buckets
    html = render_page(data)
    section = _section(html)
    assert "<svg" in section and EARLY in section and LATE in section
    assert html.index("Run config") < html.index("Evaluations per worker over time")


def test_zero_span_hostile_worker_names_and_missing_times(tmp_path):
    hostile = "</text><script>alert(1)</script>"
    with _archive(tmp_path, [(hostile, 5, 5), ("w1", 5, 5)]) as archive:
        archive.add_instances([("i9", "dev", {})])
        archive.add_evaluation(EvaluationRecord(0, "i9", "dev", 0, 0.0, worker="w1"))  # no timestamps
        data = report_data(archive)
    rows = {r["worker"]: r for r in data["workers"]["rows"]}
    assert rows[hostile]["counts"][0] == 1 and rows["w1"]["total"] == 2 and sum(rows["w1"]["counts"]) == 1
    assert len(set(data["workers"]["edges"])) == 1
    section = _section(render_page(data))
    assert "<script>" not in section and "&lt;/text&gt;&lt;script&gt;" in section


def test_no_evaluations_no_section(tmp_path):
    with _archive(tmp_path, []) as archive:
        data = report_data(archive)
    assert data["workers"] is None
    assert "Evaluations per worker" not in render_page(data)
