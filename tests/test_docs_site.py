"""The documentation site builds with --strict, and its generated reference pages hold what the code has.

`mkdocs build --strict` fails on a broken link, a page outside the nav and any warning of the hooks
(docs/hooks/reference.py) or of mkdocstrings. The build alone would pass with an empty reference page, so
the pages are then checked against their sources, read here independently of the hooks: every flag of the
search's parser is on the CLI page, and every table and column DuckDB creates from archive/schema.py's DDL
is on the schema page.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stderr[-4000:]}"
    return out


def _codes(page: str) -> set[str]:
    """The text of every <code> on the page, unescaped."""
    return {html.unescape(re.sub(r"<[^>]+>", "", code)) for code in re.findall(r"<code>(.*?)</code>", page, re.S)}


def test_the_cli_page_names_every_flag_of_the_search(site):
    from engine.front.cli import build_parser

    page = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    flags = {flag for action in build_parser()._actions for flag in action.option_strings} - {"-h", "--help"}
    assert len(flags) > 40  # the settings' flags are there to be checked
    assert flags - _codes(page) == set()
    for command in ("clade search", "clade runs sql", "clade snapshot export", "clade report", "clade plot lineage"):
        assert f"usage: {command} " in html.unescape(page), command


def test_the_schema_page_has_every_table_and_column(site):
    import duckdb

    from archive import schema

    db = duckdb.connect()
    db.execute(schema.TABLES)
    rows = db.execute("SELECT table_name, column_name, data_type FROM information_schema.columns").fetchall()
    assert {table for table, _, _ in rows} >= {"runs", "nodes", "evaluations", "llm_calls", "events"}
    page = (site / "reference" / "schema" / "index.html").read_text(encoding="utf-8")
    # each table's section: from its <h2> to the next
    sections = dict(re.findall(r'<h2 id="([\w-]+)">.*?</h2>(.*?)(?=<h2 |$)', page, re.S))
    for table, column, data_type in rows:
        assert table in sections, f"no section for table {table}"
        codes = _codes(sections[table])
        assert column in codes and data_type in codes, f"{table}.{column} ({data_type}) missing"


def test_the_api_page_documents_what_a_user_implements(site):
    page = (site / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    for name in ("tasks.base.Task", "engine.mutators.base.SyncMutator", "engine.config.RunConfig"):
        assert f'id="{name}"' in page, name
