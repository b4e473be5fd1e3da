"""`python -m engine.runs sql RUN [QUERY]`: SQL on a run's archive, read-only, with no `duckdb` CLI.

    python -m engine.runs sql runs/<run-id> "SELECT status, count(*) FROM nodes GROUP BY status"
    python -m engine.runs sql runs/<run-id> "SELECT * FROM evaluations" --csv > evaluations.csv
    python -m engine.runs sql runs/<run-id> -f question.sql   # the statements of a file (`-f -`: stdin)
    python -m engine.runs sql runs/<run-id> < queries.sql     # stdin not a terminal: a statement a line
    python -m engine.runs sql runs/<run-id>                   # a terminal: the `sql> ` prompt

QUERY, or the file given with -f, may hold several statements (`;` between them, over several lines);
each result is printed in turn as a table that never wraps, followed by its
row count (at most --max-rows rows are shown; `--csv` prints every row as
plain CSV, a header line first, for other tools). Without QUERY the
statements come from stdin, one a line (blank lines and `--` comments are
skipped), or, when stdin is a terminal, from the prompt: one statement a
line, `.tables` lists the tables with their rows, `.schema [TABLE]` their
columns, `.help` says this, an empty line or EOF (Ctrl-D) quits.

The archive is opened read-only, so a write statement fails like any other
error. Every error (bad SQL, a write, a path that is not an archive, an
archive a running search holds) is one line, `error: ...`, on stderr; it
ends the command with exit code 2, except at the prompt, which says it and
goes on.
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Callable, Iterable
from decimal import Decimal
from pathlib import Path

from archive import ArchiveError, ArchiveLocked

EXIT_USER_ERROR = 2
EXIT_INTERRUPTED = 130
MAX_ROWS = 200
PROMPT = "sql> "
HELP = "One statement a line; .tables lists the tables, .schema [TABLE] their columns; an empty line or Ctrl-D quits."


class SqlError(Exception):
    """A statement DuckDB refused, said in one line."""


def one_line(exc: BaseException) -> str:
    """DuckDB's message in one line: its first line, plus its `Did you mean ...` hint when it has one
    (the `LINE 1: ...` excerpt and its caret are left out)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    hints = [line for line in lines[1:] if line.startswith("Did you mean")]
    return " ".join(lines[:1] + hints[:1])


def connect(path: str | Path):
    """A read-only DuckDB connection to the archive of a run folder or archive file; ArchiveError (one
    line) when the path is not a Clade archive or a running search holds it."""
    import duckdb

    from engine.runinfo.reading import open_read_only

    try:
        archive = open_read_only(path)  # checks it is a DuckDB file and a Clade archive, and not held
    except ArchiveLocked as exc:
        raise ArchiveLocked(f"{exc} (or query a copy of the run folder)") from None
    file, live_as_of = archive.read_from, archive.live_as_of
    archive.close()
    if live_as_of is not None:  # on stderr: stdout stays the query's rows (csv, pipes)
        from engine.runinfo.reading import live_note

        print(f"{archive.run_id} is running: {live_note(live_as_of)} (its live copy)", file=sys.stderr)
    try:
        return duckdb.connect(str(file), read_only=True)
    except duckdb.Error as exc:
        raise ArchiveError(f"{file} is not a readable archive ({one_line(exc)})") from None


# ----- running statements --------------------------------------------------------------------------


class Result:
    """One statement's result: column names and every row (no columns for a statement that returns none)."""

    def __init__(self, columns: list[str], rows: list[tuple]) -> None:
        self.columns = columns
        self.rows = rows


def execute(con, text: str) -> list[Result]:
    """Every statement of `text`, in order; SqlError at the first one DuckDB refuses."""
    import duckdb

    try:
        statements = con.extract_statements(text)
        results = []
        for statement in statements:
            cursor = con.execute(statement)
            if cursor.description is None:
                results.append(Result([], []))
            else:
                results.append(Result([d[0] for d in cursor.description], cursor.fetchall()))
        return results
    except duckdb.Error as exc:
        raise SqlError(one_line(exc)) from None


def table_names(con) -> list[str]:
    rows = con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() ORDER BY table_name"
    ).fetchall()
    return [r[0] for r in rows]


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def tables_result(con) -> Result:
    """`.tables`: each table with its rows and columns."""
    rows = []
    for name in table_names(con):
        (count,) = con.execute(f"SELECT count(*) FROM {_quoted(name)}").fetchone()
        (columns,) = con.execute(
            "SELECT count(*) FROM duckdb_columns() WHERE database_name = current_database() AND table_name = ?", [name]
        ).fetchone()
        rows.append((name, count, columns))
    return Result(["table", "rows", "columns"], rows)


def schema_result(con, table: str | None) -> Result:
    """`.schema [TABLE]`: the columns of one table (or of every table), in order."""
    names = table_names(con)
    if table is not None and table not in names:
        raise SqlError(f"no table {table!r} (the tables: {', '.join(names)})")
    rows = []
    for name in [table] if table is not None else names:
        rows += [
            (name, *row)
            for row in con.execute(
                "SELECT column_name, data_type, CASE WHEN is_nullable THEN 'yes' ELSE 'no' END FROM duckdb_columns() "
                "WHERE database_name = current_database() AND table_name = ? ORDER BY column_index",
                [name],
            ).fetchall()
        ]
    return Result(["table", "column", "type", "nullable"], rows)


def run_line(con, line: str) -> list[Result]:
    """One line of stdin or the prompt: a dot command or a statement."""
    words = line.split()
    if words[0] == ".tables":
        return [tables_result(con)]
    if words[0] == ".schema":
        return [schema_result(con, words[1] if len(words) > 1 else None)]
    if words[0] == ".help":
        return [Result(["help"], [(HELP,)])]
    if words[0].startswith("."):
        raise SqlError(f"unknown command {words[0]} (.tables, .schema [TABLE], .help)")
    return execute(con, line)


# ----- printing -------------------------------------------------------------------------------------


def _cell(value) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


def _is_number(value) -> bool:
    return isinstance(value, int | float | Decimal) and not isinstance(value, bool)


class Printer:
    """Prints results: rich tables that never wrap (at most `max_rows` rows; 0: all), or CSV."""

    def __init__(self, console, as_csv: bool = False, max_rows: int = MAX_ROWS, out=None) -> None:
        self.console = console
        self.as_csv = as_csv
        self.max_rows = max_rows
        self.out = out

    def print(self, result: Result) -> None:
        if not result.columns:
            if not self.as_csv:
                self.console.print("OK", highlight=False)
            return
        if self.as_csv:
            out = self.out or sys.stdout
            writer = csv.writer(out, lineterminator="\n")
            writer.writerow(result.columns)
            writer.writerows(["" if v is None else _cell(v) for v in row] for row in result.rows)
            out.flush()
            return
        from rich.table import Table
        from rich.text import Text

        from engine.front.console import print_whole

        shown = result.rows if not self.max_rows else result.rows[: self.max_rows]
        table = Table(show_edge=True)
        for i, name in enumerate(result.columns):
            numeric = bool(shown) and all(_is_number(r[i]) or r[i] is None for r in shown)
            table.add_column(Text(str(name)), justify="right" if numeric else "left", no_wrap=True)
        for row in shown:
            table.add_row(*(Text("NULL", style="dim") if v is None else Text(_cell(v)) for v in row))
        print_whole(self.console, table)
        n = len(result.rows)
        rows = f"{n} row" + ("" if n == 1 else "s")
        if len(shown) < n:
            rows = f"{len(shown)} of {rows} shown (--max-rows N shows more, 0 all; --csv prints every row)"
        self.console.print(rows, highlight=False, markup=False, soft_wrap=True)


# ----- the three ways in -----------------------------------------------------------------------------


def _error(message: str) -> None:
    print(f"error: {message}", file=sys.stderr, flush=True)


def run_query(con, query: str, printer: Printer) -> int:
    """QUERY given on the command line: every statement, stopping at the first error (exit code 2)."""
    import duckdb

    try:
        statements = con.extract_statements(query)
    except duckdb.Error as exc:
        _error(one_line(exc))
        return EXIT_USER_ERROR
    if not statements:
        _error("the query holds no statement")
        return EXIT_USER_ERROR
    for statement in statements:  # one by one, so the results before an error are printed
        try:
            results = execute(con, statement.query)
        except SqlError as exc:
            _error(str(exc))
            return EXIT_USER_ERROR
        for result in results:
            printer.print(result)
    return 0


def run_lines(con, lines: Iterable[str], printer: Printer) -> int:
    """Statements from stdin, one a line (blank lines and `--` comments skipped); the first error ends it
    with exit code 2, naming its line."""
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith("--"):
            continue
        try:
            results = run_line(con, line)
        except SqlError as exc:
            _error(f"line {number}: {exc}")
            return EXIT_USER_ERROR
        for result in results:
            printer.print(result)
    return 0


def prompt(con, printer: Printer, read: Callable[[str], str] = input, name: str = "") -> int:
    """The `sql> ` prompt: a statement a line; an error is said and the prompt goes on; an empty line or
    EOF quits (exit 0)."""
    try:
        import readline  # noqa: F401  (line editing and history for input(), where available)
    except ImportError:
        pass
    printer.console.print(
        f"{name} (read-only). {HELP}" if name else HELP, highlight=False, markup=False, soft_wrap=True
    )
    while True:
        try:
            line = read(PROMPT).strip()
        except EOFError:
            printer.console.print()
            return 0
        if not line:
            return 0
        try:
            results = run_line(con, line)
        except SqlError as exc:
            _error(str(exc))
            continue
        for result in results:
            printer.print(result)


def query_of(query: str | None, file: str | None) -> str | None:
    """The statements to run: QUERY, or the text of FILE (`-`: all of stdin); None: stdin line by line or the
    prompt. ArchiveError (one line) for both or an unreadable file."""
    if file is None:
        return query
    if query is not None:
        raise ArchiveError("give QUERY or -f FILE, not both")
    if file == "-":
        return sys.stdin.read()
    try:
        return Path(file).read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise ArchiveError(f"cannot read {file}: {exc.strerror if isinstance(exc, OSError) else exc}") from None


def main(path: Path, query: str | None, console, as_csv: bool = False, max_rows: int = MAX_ROWS, stdin=None) -> int:
    """The `sql` command: QUERY, else stdin line by line, else (a terminal) the prompt. ArchiveError
    (one line, exit code 2 in the caller) when the path is no readable archive."""
    stdin = stdin if stdin is not None else sys.stdin
    con = connect(path)
    printer = Printer(console, as_csv, max_rows)
    try:
        if query is not None:
            return run_query(con, query, printer)
        if stdin.isatty():
            return prompt(con, printer, name=str(path))
        return run_lines(con, stdin, printer)
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        con.close()
