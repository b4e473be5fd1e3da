"""The five SQL questions of docs/guide/archive.md ("Five questions to ask an archive") run with duckdb on real
archives and answer."""

from __future__ import annotations

import re

import duckdb
import pytest

from tests.conftest import REPO

QUESTIONS = ("mutations helped most", "cost per point", "failed and why", "root to the final node", "throughput")


def readme_queries() -> list[tuple[str, str]]:
    """(the line that asks, the query) for each ```sql block of the archive page's five questions."""
    text = (REPO / "docs" / "guide" / "archive.md").read_text()
    section = text[text.index("## Five questions to ask an archive") :]
    section = section[: section.index("\n## ", 4)]
    return re.findall(r"\n([^\n]+)\n\n```sql\n(.*?)```", section, re.DOTALL)


def test_the_archive_page_asks_the_five_questions():
    asked = [q.lower() for q, _ in readme_queries()]
    assert len(asked) == 5
    for question, line in zip(QUESTIONS, asked):
        assert question in line, (question, line)


def _run_all(path) -> list[list[tuple]]:
    with duckdb.connect(str(path / "archive.duckdb"), read_only=True) as con:
        return [con.execute(sql).fetchall() for _, sql in readme_queries()]


def test_every_question_answers_on_a_real_run(small_run):
    helped, cost, failed, path, throughput = _run_all(small_run)
    assert helped and cost and path and throughput  # failed may be empty: a clean offline run has none
    con = duckdb.connect(str(small_run / "archive.duckdb"), read_only=True)
    (final,) = con.execute("SELECT node_id FROM events WHERE kind = 'select_final'").fetchone()
    (bad,) = con.execute("SELECT count(*) FROM evaluations WHERE status <> 'ok'").fetchone()
    assert sum(r[3] for r in failed) == bad
    assert path[0][1] == 0 and path[-1][1] == final  # from the root down to the final node
    assert [r[0] for r in path] == list(range(len(path)))  # depths 0, 1, 2, ...
    assert cost[0][1] == 0 and cost[0][3] > 0  # no dollars offline; dev evaluations counted
    assert sum(r[1] for r in throughput) == con.execute("SELECT count(*) FROM evaluations").fetchone()[0]
    con.close()


def test_every_question_has_rows_on_an_archive_with_failures_and_spend(synthetic_run):
    helped, cost, failed, path, throughput = _run_all(synthetic_run)
    assert all([helped, cost, failed, path, throughput])
    assert cost[0][1] > 0  # dollars spent
    assert {r[0] for r in failed} <= {"error", "timeout", "killed", "bad_output"}
    assert (
        sum(r[3] for r in failed)
        == duckdb.connect(str(synthetic_run / "archive.duckdb"), read_only=True)
        .execute("SELECT count(*) FROM evaluations WHERE status <> 'ok'")
        .fetchone()[0]
    )


@pytest.mark.parametrize("word", ['"at"', '"repeat"'])
def test_reserved_words_are_quoted_where_used(word):
    queries = " ".join(sql for _, sql in readme_queries())
    bare = word.strip('"')
    assert not re.search(rf'(?<!["\w]){bare}(?!["\w])', queries.replace(word, ""))
