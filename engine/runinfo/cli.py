"""The command line of `python -m engine.runs`.

    python -m engine.runs list [RUN_DIR]          # every run in a folder (default: runs)
    python -m engine.runs show RUN                # config, counts by status, spend, final node, resume
    python -m engine.runs show RUN --node N       # one node, and its agents' steps (trajectories)
    python -m engine.runs show RUN --config       # its configuration as a run file (TOML) for `search --config`
    python -m engine.runs best RUN                # the final node: id, score, description, code
    python -m engine.runs compare RUN RUN [RUN..] # side by side
    python -m engine.runs sql RUN ["SELECT .."]   # SQL on the archive: QUERY, stdin, or a `sql> ` prompt
    python -m engine.runs serve [RUN ...]         # a live page on localhost (the `live` extra; engine/live)
    python -m engine.runs export RUN --traces F   # training traces, one record per child (.jsonl or .parquet)

RUN is a run folder, its archive.duckdb, or a run id under --run-dir. Archives
are opened read-only. A run left `running` by a search that died is shown as
`stopped (killed?)`; every unfinished run comes with the command that resumes
it. Bad input ends in one line and exit code 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from engine.errors import EXIT_USER_ERROR
from engine.front.console import print_whole
from engine.front.one_line import OneLineParser

PROG = "python -m engine.runs"  # `clade runs` passes its own name (clade/cli.py)


def _rows(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a count of rows (0 or more)")
    return int(text)


def _node_id(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a node id (0 or more)")
    return int(text)


def _port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (0 to 65535; 0: any free one)")
    return int(text)


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    from clade.version import add_version_flag

    p = OneLineParser(
        prog=prog,
        description="Look at finished (or stopped) runs through their archives, read-only.",
    )
    p.add_argument(
        "--run-dir", default="runs", help="folder that holds run folders, for RUN given as an id (default: runs)"
    )
    add_version_flag(p)
    sub = p.add_subparsers(
        dest="command", required=True, metavar="{list,show,best,compare,sql,serve,export}", parser_class=OneLineParser
    )
    # --run-dir is also accepted after the command
    for command in (*_add_readers(sub), _add_sql(sub), _add_serve(sub), _add_export(sub)):
        command.add_argument("--run-dir", default=argparse.SUPPRESS, help="as before the command")
    return p


def _add_readers(sub) -> tuple[argparse.ArgumentParser, ...]:
    """list, show, best, compare: the commands that print what a run holds (each also takes --run-dir)."""
    ls = sub.add_parser(
        "list",
        intermixed=True,
        help="every run in a folder: id, task, policy, status, budget, evaluations, "
        "best mean, final node's holdout score, created",
    )
    ls.add_argument("folder", nargs="?", help="folder of runs (default: --run-dir)")
    show = sub.add_parser("show", intermixed=True, help="one run: config, counts by status, spend, final node")
    show.add_argument("run")
    what = show.add_mutually_exclusive_group()
    what.add_argument(
        "--config",
        action="store_true",
        help="print the run's configuration as a run file (TOML), which `clade search --config FILE` runs again",
    )
    what.add_argument(
        "--node",
        type=_node_id,
        metavar="N",
        help="show node N instead: its parent, scores and "
        "change, then its agents' steps on each instance and the steps its parent took to make it",
    )
    best = sub.add_parser(
        "best",
        intermixed=True,
        help="the run's final node (or best fully evaluated node): id, score, description and its code",
    )
    best.add_argument("run")
    best.add_argument("--code-only", action="store_true", help="print only the code (one file: as is)")
    cmp_ = sub.add_parser("compare", intermixed=True, help="two or more runs side by side")
    cmp_.add_argument("runs", nargs="+", metavar="RUN")
    return ls, show, best, cmp_


def _add_sql(sub) -> argparse.ArgumentParser:
    about = (
        "SQL on the run's archive, read-only: QUERY, else statements from stdin (one a line), else a "
        "`sql> ` prompt on a terminal (.tables, .schema TABLE; an empty line quits)"
    )
    sql = sub.add_parser("sql", intermixed=True, help=about, description=about + ". Errors: one line, exit code 2.")
    sql.add_argument("run", help="a run folder, its archive.duckdb, or a run id under --run-dir")
    sql.add_argument("query", nargs="?", help="one or more statements (`;` between them); none: stdin or the prompt")
    sql.add_argument(
        "-f",
        "--file",
        metavar="FILE",
        help="run every statement of FILE (over several lines, `;` "
        "between them), as QUERY; `-` reads them from stdin (a heredoc)",
    )
    sql.add_argument("--csv", action="store_true", help="plain CSV (a header line, then every row), for other tools")
    sql.add_argument(
        "--max-rows",
        type=_rows,
        default=200,
        metavar="N",
        help="rows shown per table (default 200; 0: all); --csv prints every row",
    )
    return sql


def _add_serve(sub) -> argparse.ArgumentParser:
    serve = sub.add_parser(
        "serve",
        intermixed=True,
        help="a page (on localhost unless --host says otherwise) that follows running searches (and finished ones): "
        "the runs list, each run's tree, scores, worker lanes and spend; needs the live extra",
    )
    serve.add_argument("runs", nargs="*", metavar="RUN", help="run folders or folders of runs (default: --run-dir)")
    serve.add_argument("--port", type=_port, default=8765, help="port (default 8765; 0: any free one)")
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1); beyond loopback (0.0.0.0, a name, an address) every "
        "request needs the token, a new one unless --token gives it, printed in the URL",
    )
    serve.add_argument(
        "--token",
        metavar="TOKEN",
        help="the token every request must carry (?token=, then a cookie, or an Authorization: Bearer header), "
        "on loopback too; CLADE_LIVE_TOKEN gives it out of `ps` (default: none on loopback, a new one beyond)",
    )
    serve.add_argument("--certfile", metavar="PEM", help="serve HTTPS with this certificate (and --keyfile)")
    serve.add_argument("--keyfile", metavar="PEM", help="the certificate's private key (unencrypted PEM)")
    return serve


def _add_export(sub) -> argparse.ArgumentParser:
    about = (
        "write the run's training traces: one record per child a mutator made (the messages sent, the answer, "
        "parent and child code, the diff, status, scores, the change, tokens and cost), as JSON lines or Parquet"
    )
    export = sub.add_parser("export", intermixed=True, help=about, description=about + " (docs/guide/traces.md).")
    export.add_argument("run", help="a run folder, its archive.duckdb, or a run id under --run-dir")
    export.add_argument(
        "--traces", required=True, metavar="FILE", help="the file to write: FILE.jsonl (JSON lines) or FILE.parquet"
    )
    export.add_argument(
        "--valid-only", action="store_true", help="only the children that are valid and evaluated ok on dev"
    )
    export.add_argument(
        "--no-holdout",
        action="store_true",
        help="leave the holdout scores out (data to train on must not see the held-out set)",
    )
    export.add_argument("--force", action="store_true", help="replace FILE when it is there already")
    return export


def _export(args, console) -> None:
    from engine.runinfo.traces import TraceOptions, check_target, export_traces

    check_target(args.traces, args.force)  # before the run is read: a bad name costs nothing
    options = TraceOptions(valid_only=args.valid_only, holdout=not args.no_holdout)
    count = export_traces(resolve_run(args.run, args.run_dir), args.traces, options, force=args.force)
    console.print(f"{count} trace records written to {args.traces}", soft_wrap=True, highlight=False, markup=False)


def resolve_run(name: str, run_dir: str) -> Path:
    """A path as given when it exists, else a run id under `run_dir`."""
    from archive import ArchiveError

    given = Path(name)
    if given.exists():
        return given
    under = Path(run_dir) / name
    if under.exists():
        return under
    raise ArchiveError(f"no run {name!r}: not a path, and no such run under {run_dir}/")


def _best(args, console) -> None:
    from rich.table import Table

    from engine.runinfo.info import best_node

    info, node, why, files, description = best_node(resolve_run(args.run, args.run_dir))
    if args.code_only:
        if len(files) == 1:
            sys.stdout.write(next(iter(files.values())))
            return
        for path, text in files.items():
            sys.stdout.write(f"# ===== {path} =====\n{text}" + ("" if text.endswith("\n") else "\n"))
        return
    from archive.records import NodeStats
    from engine.runinfo.reading import open_read_only

    with open_read_only(info.archive) as archive:
        stats = archive.dev_node_stats().get(node, NodeStats(None, 0, 0))
        hold = archive.holdout_mean(node)
    table = Table(title=f"Best agent of {info.run_id}", title_justify="left", show_header=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    table.add_row("node", f"#{node}, {why}")
    table.add_row("dev mean", "-" if stats.mean is None else f"{stats.mean:.3f} (n={stats.n})")
    table.add_row("holdout mean", "-" if hold[0] is None else f"{hold[0]:.3f} (n={hold[1]})")
    table.add_row("change", description or "-")
    table.add_row("files", ", ".join(files) or "-")
    print_whole(console, table)
    console.print(f"Code only: clade runs best {args.run} --code-only > agent.py", soft_wrap=True, highlight=False)
    for path, text in files.items():
        console.print(f"\n[bold]===== {path} =====[/bold]")
        sys.stdout.flush()
        console.file.flush()
        print(text, end="" if text.endswith("\n") else "\n")


def run_command(args, console) -> int:
    from engine.runinfo import info as data
    from engine.runinfo import tables

    if args.command == "list":
        folder = args.folder or args.run_dir
        rows = data.list_runs(folder)
        if not rows:
            console.print(f"No runs in {folder}/ (a run is a folder with an archive.duckdb).")
            return 0
        print_whole(console, tables.list_table(rows, f"Runs in {folder}"))
        _print_lines(console, tables.resume_lines(rows))
    elif args.command == "show" and args.config:
        _print_run_file(resolve_run(args.run, args.run_dir))
    elif args.command == "show" and args.node is not None:
        node = data.node_info(resolve_run(args.run, args.run_dir), args.node)
        print_whole(console, tables.node_table(node))
        _print_lines(console, tables.trajectory_lines(node))
    elif args.command == "show":
        info = data.run_info(resolve_run(args.run, args.run_dir))
        for table in tables.show_tables(info):
            print_whole(console, table)
        _print_lines(console, tables.resume_lines([info], one=True))
    elif args.command == "best":
        _best(args, console)
    elif args.command == "sql":
        from engine.runinfo import sql

        return sql.main(
            resolve_run(args.run, args.run_dir),
            sql.query_of(args.query, args.file),
            console,
            as_csv=args.csv,
            max_rows=args.max_rows,
        )
    elif args.command == "serve":
        from engine.live.server import serve

        return serve(args.runs, args.run_dir, args.host, args.port, args.token, args.certfile, args.keyfile)
    elif args.command == "export":
        _export(args, console)
    elif args.command == "compare":
        if len(args.runs) < 2:
            from archive import ArchiveError

            raise ArchiveError("compare needs two runs or more")
        infos = [data.run_info(resolve_run(r, args.run_dir)) for r in args.runs]
        print_whole(console, tables.compare_table(infos))
        _print_lines(console, tables.resume_lines(infos))
    return 0


def _print_run_file(run: Path) -> None:
    """The run's stored configuration (runs.config) as a run file on stdout."""
    from engine.config import RunConfig
    from engine.config.run_file import to_toml
    from engine.runinfo.reading import open_read_only

    with open_read_only(run) as archive:
        stored = archive.config()
    sys.stdout.write(to_toml(RunConfig.from_dict(stored)))


def reads_a_running_search(args) -> bool:
    """Does this command read a search that is running (its live copy is there)? Then it yields the CPU to it
    (engine/runinfo/yielding.py). `serve` yields by itself, once it has started (engine/live/server.py)."""
    from archive import ArchiveError, archive_path
    from archive.live import LIVE_FILE, live_file

    if args.command == "serve":
        return False
    if args.command == "list":
        return any(Path(args.folder or args.run_dir).glob(f"*/{LIVE_FILE}"))
    names = args.runs if args.command == "compare" else [args.run]
    for name in names:
        try:
            if live_file(archive_path(resolve_run(name, args.run_dir))).is_file():
                return True
        except (ArchiveError, OSError):
            continue  # the command itself says what is wrong with the name
    return False


def _run_reporting(args, console) -> int:
    """run_command, its user errors in one line (in the yielding child too: its exceptions never reach main)."""
    from archive import ArchiveError

    try:
        return run_command(args, console)
    except ArchiveError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    except BrokenPipeError:  # `... | head`
        return 0


def _print_lines(console, lines: list[str]) -> None:
    for line in lines:  # soft_wrap: a command stays one line, to copy whole
        console.print(line, soft_wrap=True, highlight=False, markup=False)


def main(argv: Sequence[str] | None = None, prog: str = PROG) -> int:
    args = build_parser(prog).parse_args(argv)
    from engine.front.console import make_console

    console = make_console()
    if reads_a_running_search(args):
        from engine.runinfo.yielding import yielding

        return yielding(lambda: _run_reporting(args, console))
    return _run_reporting(args, console)
