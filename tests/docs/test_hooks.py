"""The documentation site's hooks (docs/hooks): an argparse parser as Markdown, archive/schema.py's DDL read
into tables, and the markers the reference pages are filled at. Fast: no site is built (tests/test_docs_site.py
builds one)."""

from __future__ import annotations

import argparse
import logging
from importlib import import_module
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

HOOKS = Path(__file__).resolve().parents[2] / "docs" / "hooks"


@pytest.fixture
def hooks(monkeypatch) -> SimpleNamespace:
    """The hook modules, imported as mkdocs does: with their folder on sys.path."""
    monkeypatch.syspath_prepend(str(HOOKS))
    names = ("cli_page", "schema_page", "reference", "markdown_text")
    modules: dict[str, ModuleType] = {name: import_module(name) for name in names}
    return SimpleNamespace(**modules)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tool", description="Do a thing.")
    p.add_argument("--level", type=int, default=3, help="how much (default: %(default)s)")
    p.add_argument("--mode", choices=["fast", "slow"], default="fast", help="pick a | b, or <none>")
    section = p.add_argument_group("LLM settings")
    section.add_argument("--model", metavar="{a,b}", help="the model `x|y` (default: none: offline)")
    section.add_argument("--hidden", help=argparse.SUPPRESS)
    sub = p.add_subparsers(dest="command")
    show = sub.add_parser("show", help="show one run")
    show.add_argument("run", help="a run folder")
    return p


def test_a_parser_becomes_usage_and_a_table_per_group(hooks):
    text = "\n".join(hooks.cli_page.render("clade tool", _parser()))
    assert "## clade tool" in text and "usage: clade tool [-h]" in text  # the prog as typed through clade
    assert "### LLM settings" in text  # the group's title as written (not lowercased)
    assert "| `--level` `LEVEL` |  | 3 | how much |" in text  # the default moved out of the help into its column
    assert "| `--mode` `{fast,slow}` | `fast`, `slow` | `fast` | pick a \\| b, or &lt;none&gt; |" in text
    assert "| `--model` `{a,b}` | `a`, `b` | none: offline | the model `x|y` |" in text  # code span kept whole
    assert "--hidden" not in text and "--help" not in text
    assert "### clade tool show" in text and "usage: clade tool show [-h] run" in text
    assert "| `run` |  | a run folder |" in text  # no Choices column where no option has choices


def test_a_builder_that_is_not_there_is_none(hooks):
    assert hooks.cli_page.builder("engine.front.cli", "build_parser") is not None
    assert hooks.cli_page.builder("engine.front.cli", "no_such_function") is None
    assert hooks.cli_page.builder("clade.no_such_module", "build_parser") is None


def test_every_command_of_the_table_has_its_parser(hooks):
    for title, module, function in hooks.cli_page.PARSERS:
        build = hooks.cli_page.builder(module, function)
        assert build is not None, title
        assert isinstance(build(), argparse.ArgumentParser), title


def test_a_missing_parser_is_a_warning_and_left_out(hooks, monkeypatch, caplog):
    rows = (*hooks.cli_page.PARSERS[:1], ("clade gone", "clade.no_such_module", "build_parser"))
    monkeypatch.setattr(hooks.cli_page, "PARSERS", rows)
    with caplog.at_level(logging.WARNING):
        text = hooks.reference._cli_markdown()
    assert "## clade search" in text and "clade gone" not in text
    assert any("clade.no_such_module.build_parser not found" in r.getMessage() for r in caplog.records)


def test_markers_are_filled_and_an_unknown_one_warns(hooks, caplog):
    page = SimpleNamespace(file=SimpleNamespace(src_path="reference/x.md"))
    source = "# Schema\n\n<!-- clade:schema -->\n\n<!-- clade:nothing -->\n"
    with caplog.at_level(logging.WARNING):
        out = hooks.reference.on_page_markdown(source, page, None, None)
    assert "## evaluations" in out and "<!-- clade:schema -->" not in out
    assert "<!-- clade:nothing -->" in out
    assert any("no generator named 'nothing'" in r.getMessage() for r in caplog.records)


def test_the_ddl_is_read_as_duckdb_creates_it(hooks):
    import duckdb

    from archive import schema

    db = duckdb.connect()
    db.execute(schema.TABLES)
    made = {
        (table, column): (data_type, nullable == "YES", default)
        for table, column, data_type, nullable, default in db.execute(
            "SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns"
        ).fetchall()
    }
    read = {
        (table.name, column.name): (column.type, column.nullable, column.default)
        for table in hooks.schema_page.parse_tables(schema.TABLES)
        for column in table.columns
    }
    assert read.keys() == made.keys()
    for key, (data_type, nullable, default) in made.items():
        assert read[key][:2] == (data_type, nullable), key
        assert (read[key][2] is None) == (default is None), key  # DuckDB spells a default its own way
    unique = next(t for t in hooks.schema_page.parse_tables(schema.TABLES) if t.name == "evaluations").constraints
    assert unique == ('UNIQUE (node_id, instance_id, "repeat")',)


def test_columns_a_migration_adds_are_marked(hooks):
    from archive import schema

    added = hooks.schema_page.added_columns(schema.MIGRATIONS)
    assert ("llm_calls", "instance_id") in added and ("nodes", "role") in added
    text = hooks.schema_page.schema_markdown()
    role = next(line for line in text.splitlines() if line.startswith("| `role` |"))
    assert "`'agent'`" in role and "added to older archives" in role
    assert "## arena_proposals\n\nMay be absent" in text  # an optional table says so


def test_a_cell_escapes_markdown_outside_code(hooks):
    cell = hooks.markdown_text.cell
    assert cell("a *b* [c] <d> `e*f`") == "a \\*b\\* \\[c\\] &lt;d&gt; `e*f`"
    assert cell("one\n  line") == "one line"
    assert cell("odd ` tick") == "odd \\` tick"
