"""The command line of `python -m engine.search`.

Only argparse is imported until the arguments are parsed, so `--help` is
instant and pulls in none of the heavy dependencies.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from engine.errors import EXIT_INTERRUPTED, EXIT_USER_ERROR  # light: the errors module imports nothing
from engine.front.one_line import OneLineParser

PROG = "python -m engine.search"  # `clade search` passes its own name (clade/cli.py)


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    """The command's own options, then every setting's flag, generated from its declaration (engine/config)."""
    from clade.version import add_version_flag
    from engine.config.arguments import add_settings

    p = OneLineParser(
        prog=prog,
        usage="%(prog)s [OPTION ...]",  # each option, its values and default, below: not all of them twice
        description="Search for better agents: a tree of agent variants in a DuckDB archive, "
        "expanded by a policy (HGM by default), mutated by the offline mutator, evaluated in sandboxes.",
    )
    p.add_argument("--resume", metavar="RUN", help="continue a stopped run (its folder or archive file)")
    p.add_argument(
        "--resume-from",
        metavar="SNAPSHOT",
        help="a new run (in --run-dir) that continues the tree "
        "of a snapshot made by clade snapshot export; --budget counts its evaluations too",
    )
    p.add_argument("--quiet", action="store_true", help="no live progress display")
    p.add_argument(
        "--config",
        metavar="FILE",
        help="a run file (TOML): a table per section ([search], [evaluation], [llm], [improvement], [benchmark], "
        "[output]) of settings by their names (budget, policy, ...); flags given too override it",
    )
    p.add_argument(
        "--print-config",
        action="store_true",
        help="print the configuration (the defaults, the run file's, the flags') as a run file, and exit",
    )
    add_version_flag(p)
    add_settings(p)
    return p


def main(argv: Sequence[str] | None = None, prog: str = PROG) -> int:
    args = build_parser(prog).parse_args(argv)
    from engine.errors import UserError

    try:
        if args.config is not None:
            from engine.config.run_file import apply_run_file

            apply_run_file(args)
        if args.print_config:
            return _print_config(args)
        from engine.front.run import run_from_args

        return run_from_args(args)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _print_config(args: argparse.Namespace) -> int:
    """The new run's checked configuration, as a run file on stdout; no run folder is made."""
    from engine.config.arguments import config_from_args
    from engine.config.run_file import to_toml
    from engine.errors import UserError

    if args.resume or args.resume_from or args.replay:
        raise UserError("--print-config prints a new run's configuration; a stored run's: clade runs show RUN --config")
    sys.stdout.write(to_toml(config_from_args(args)))
    return 0
