"""`python -m engine.runs sql`: SQL on a run's archive, read-only: a query, stdin, the `sql> ` prompt, one-line
errors."""

from __future__ import annotations

import csv
import hashlib
import io
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from engine.runinfo.cli import main
from tests.conftest import REPO
from tests.engine.plots.run_fixture import shared_small_run


@pytest.fixture(scope="module")
def real_run(tmp_path_factory) -> Path:
    return shared_small_run(tmp_path_factory)


def runs_sql(*args: str, stdin=None, input: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="200")
    return subprocess.run(
        [sys.executable, "-m", "engine.runs", "sql", *args],
        cwd=REPO,
        env=env,
        stdin=stdin,
        input=input,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _sql(run: Path, query: str):
    with duckdb.connect(str(run / "archive.duckdb"), read_only=True) as con:
        return con.execute(query).fetchall()


def _digest(run: Path) -> str:
    return hashlib.sha256((run / "archive.duckdb").read_bytes()).hexdigest()


def _rows(text: str) -> list[list[str]]:
    """The body rows of the rich tables in `text`, cells stripped."""
    return [[c.strip() for c in line.strip("│").split("│")] for line in text.splitlines() if line.startswith("│")]


def test_a_query_prints_its_result_as_a_table_with_the_row_count(real_run, capsys):
    assert main(["sql", str(real_run), "SELECT status, count(*) AS n FROM nodes GROUP BY status ORDER BY status"]) == 0
    text = capsys.readouterr().out
    expected = _sql(real_run, "SELECT status, count(*) FROM nodes GROUP BY status ORDER BY status")
    assert _rows(text) == [[status, str(n)] for status, n in expected]
    assert "status" in text and " n " in text  # the header
    assert f"{len(expected)} row" in text


def test_the_run_is_a_folder_its_archive_file_or_an_id_under_run_dir(real_run, capsys):
    query = "SELECT count(*) AS evaluations FROM evaluations"
    (n,) = _sql(real_run, query)[0]
    for args in (
        ["sql", str(real_run), query],
        ["sql", str(real_run / "archive.duckdb"), query],
        ["--run-dir", str(real_run.parent), "sql", real_run.name, query],
        ["sql", real_run.name, query, "--run-dir", str(real_run.parent)],
    ):
        assert main(args) == 0, args
        assert _rows(capsys.readouterr().out) == [[str(n)]]


def test_several_statements_print_a_table_each_and_text_stays_text(real_run, capsys):
    assert main(["sql", str(real_run), "SELECT 1 AS one;\nSELECT '[bold]x[/bold]' AS markup, NULL AS nothing;"]) == 0
    text = capsys.readouterr().out
    assert _rows(text) == [["1"], ["[bold]x[/bold]", "NULL"]]  # rich markup in a value is printed as is
    assert text.count("1 row") == 2


def test_a_wide_result_is_never_wrapped(real_run):
    out = runs_sql(str(real_run), "SELECT repeat('x', 300) AS wide, 'runs/some-run/archive.duckdb' AS path")
    assert out.returncode == 0, out.stderr
    assert "x" * 300 in out.stdout and "runs/some-run/archive.duckdb" in out.stdout


def test_csv_prints_every_row_as_plain_csv(real_run):
    query = "SELECT node_id, instance_id, score, feedback FROM evaluations ORDER BY node_id, instance_id, repeat"
    out = runs_sql(str(real_run), query, "--csv", "--max-rows", "1")
    assert out.returncode == 0, out.stderr
    rows = list(csv.reader(io.StringIO(out.stdout)))
    expected = _sql(real_run, query)
    assert rows[0] == ["node_id", "instance_id", "score", "feedback"]
    assert len(rows) == len(expected) + 1 and len(expected) > 1
    assert [(int(a), b, float(c), d) for a, b, c, d in rows[1:]] == [(a, b, c, d or "") for a, b, c, d in expected]
    assert "┃" not in out.stdout and "row" not in out.stdout.splitlines()[-1]


def test_a_file_or_stdin_with_f_holds_statements_over_several_lines(real_run, tmp_path):
    """-f FILE (or `-f -`, a heredoc) runs a query as docs/guide/archive.md writes it: several lines, `;`, quotes."""
    query = (
        "SELECT node_id, count(*) AS n FROM evaluations WHERE split = 'dev'\n"
        'GROUP BY node_id ORDER BY node_id LIMIT 3;\nSELECT count("at") AS events FROM events;\n'
    )
    expected = [
        [str(a), str(b)]
        for a, b in _sql(
            real_run,
            "SELECT node_id, count(*) FROM evaluations WHERE split = 'dev' GROUP BY node_id ORDER BY node_id LIMIT 3",
        )
    ]
    expected.append([str(_sql(real_run, "SELECT count(*) FROM events")[0][0])])
    (tmp_path / "q.sql").write_text(query)
    for args, given in (([str(real_run), "-f", str(tmp_path / "q.sql")], None), ([str(real_run), "-f", "-"], query)):
        out = runs_sql(*args, input=given)
        assert out.returncode == 0, out.stderr
        assert _rows(out.stdout) == expected
    for args, message in (
        ([str(real_run), "-f", str(tmp_path / "none.sql")], "cannot read"),
        ([str(real_run), "SELECT 1", "-f", str(tmp_path / "q.sql")], "not both"),
    ):
        out = runs_sql(*args)
        assert out.returncode == 2 and out.stderr.count("\n") == 1 and message in out.stderr, out.stderr


def test_max_rows_cuts_the_table_and_says_so(real_run, capsys):
    (n,) = _sql(real_run, "SELECT count(*) FROM evaluations")[0]
    assert main(["sql", str(real_run), "SELECT node_id FROM evaluations", "--max-rows", "3"]) == 0
    text = capsys.readouterr().out
    assert len(_rows(text)) == 3 and f"3 of {n} rows shown" in text
    assert main(["sql", str(real_run), "SELECT node_id FROM evaluations", "--max-rows", "0"]) == 0
    assert len(_rows(capsys.readouterr().out)) == n


def test_stdin_that_is_not_a_terminal_is_read_a_statement_a_line(real_run):
    (nodes,) = _sql(real_run, "SELECT count(*) FROM nodes")[0]
    script = "SELECT count(*) AS nodes FROM nodes\n\n-- a comment\n.tables\n.schema runs\nSELECT 7 AS seven;\n"
    out = runs_sql(str(real_run), input=script)
    assert out.returncode == 0, out.stderr
    rows = _rows(out.stdout)
    assert rows[0] == [str(nodes)]
    tables = {r[0]: r[1] for r in rows if len(r) == 3}
    assert set(tables) >= {"runs", "nodes", "evaluations", "events", "llm_calls", "blobs"}
    assert tables["nodes"] == str(nodes)
    assert ["runs", "status", "VARCHAR", "no"] in rows and ["runs", "id", "VARCHAR", "no"] in rows
    assert rows[-1] == ["7"]


def test_an_error_on_stdin_names_its_line_and_ends_with_exit_code_2(real_run):
    out = runs_sql(str(real_run), input="SELECT 1 AS fine\nSELECT nope FROM nodes\nSELECT 2 AS never\n")
    assert out.returncode == 2
    assert out.stderr.startswith("error: line 2: ") and out.stderr.count("\n") == 1, out.stderr
    assert "nope" in out.stderr and "Traceback" not in out.stderr
    assert _rows(out.stdout) == [["1"]]  # what came before the error was printed; nothing after it ran


def test_a_terminal_gets_the_prompt(real_run):
    """stdin a pseudo-terminal: `sql> `, a statement a line, an error said and the prompt going on, an empty
    line to quit."""
    master, slave = pty.openpty()
    env = dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="200")
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "engine.runs", "sql", str(real_run)],
            cwd=REPO,
            env=env,
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        os.close(slave)
        os.write(master, b"SELECT 42 AS answer\nSELEC 1\n.schema nodes\n.schema nope\n\nSELECT 'not read'\n")
        out, err = proc.communicate(timeout=60)
    finally:
        os.close(master)
    assert proc.returncode == 0, err
    assert out.startswith(f"{real_run} (read-only). One statement a line")
    assert out.count("sql> ") == 5  # four statements, then the empty line that quits
    rows = _rows(out)
    assert rows[0] == ["42"] and ["nodes", "parent_id", "BIGINT", "yes"] in rows
    assert "not read" not in out
    lines = err.splitlines()
    assert len(lines) == 2 and "syntax error" in lines[0] and "no table 'nope'" in lines[1]


def test_eof_at_the_prompt_quits(real_run, monkeypatch, capsys):
    from engine.front.console import make_console
    from engine.runinfo import sql

    def read(prompt: str) -> str:
        raise EOFError

    con = sql.connect(real_run)
    try:
        assert sql.prompt(con, sql.Printer(make_console()), read=read) == 0
    finally:
        con.close()


def test_write_statements_fail_in_one_line_and_leave_the_archive_as_it_was(real_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(real_run, run)
    before = _digest(run)
    for query in (
        "DELETE FROM nodes",
        "UPDATE runs SET status = 'x'",
        "INSERT INTO blobs VALUES ('h', 'c')",
        "CREATE TABLE t (a INTEGER)",
        "DROP TABLE events",
    ):
        out = runs_sql(str(run), query)
        assert out.returncode == 2, query
        assert out.stderr.startswith("error: ") and out.stderr.count("\n") == 1, out.stderr
        assert "read-only" in out.stderr, out.stderr
    assert _digest(run) == before
    assert _sql(run, "SELECT count(*) FROM events")[0][0] > 0


def _not_a_clade_archive(tmp_path: Path) -> Path:
    path = tmp_path / "other" / "archive.duckdb"
    path.parent.mkdir()
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE t (a INTEGER)")
    return path.parent


@pytest.mark.parametrize(
    "case, message",
    [
        ("bad sql", 'syntax error at or near "SELEC"'),
        ("unknown table", 'Did you mean "nodes"?'),
        ("no statement", "holds no statement"),
        ("text file", "not an archive (not a DuckDB file)"),
        ("other duckdb file", "not a Clade archive (no runs table)"),
        ("no such run", "no run 'no-such-run'"),
        ("folder without archive", "not an archive (no archive.duckdb there)"),
        ("bad max rows", "--max-rows"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(real_run, tmp_path, case, message):
    (tmp_path / "notes.txt").write_text("not a database\n")
    run, query, extra = str(real_run), "SELECT 1", []
    if case == "bad sql":
        query = "SELEC 1"
    elif case == "unknown table":
        query = "SELECT * FROM nodez"
    elif case == "no statement":
        query = "  "
    elif case == "text file":
        run = str(tmp_path / "notes.txt")
    elif case == "other duckdb file":
        run = str(_not_a_clade_archive(tmp_path))
    elif case == "no such run":
        run = "no-such-run"
        extra = ["--run-dir", str(tmp_path)]
    elif case == "folder without archive":
        run = str(tmp_path)
    elif case == "bad max rows":
        extra = ["--max-rows", "-3"]
    out = runs_sql(run, query, *extra)
    assert out.returncode == 2
    assert out.stderr.startswith("error: ") and out.stderr.count("\n") == 1, out.stderr
    assert message in out.stderr and "Traceback" not in out.stderr
    assert out.stdout == ""


def test_an_archive_a_running_search_holds_is_refused_in_one_line(real_run, tmp_path):
    run = tmp_path / "busy"
    shutil.copytree(real_run, run)
    holder = duckdb.connect(str(run / "archive.duckdb"))  # as a running search holds it: a writer's lock
    try:
        out = runs_sql(str(run), "SELECT 1")
    finally:
        holder.close()
    assert out.returncode == 2
    assert out.stderr.startswith("error: ") and out.stderr.count("\n") == 1, out.stderr
    assert "held by another running search" in out.stderr and "copy" in out.stderr


def test_help_lists_sql(capsys):
    with pytest.raises(SystemExit):
        main(["sql", "--help"])
    text = capsys.readouterr().out
    assert "--csv" in text and "--max-rows" in text and "--file" in text and "sql>" in text
