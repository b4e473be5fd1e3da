"""The command line of `python -m engine.search`.

Only argparse is imported until the arguments are parsed, so `--help` is
instant and pulls in none of the heavy dependencies.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

from engine.errors import EXIT_INTERRUPTED, EXIT_USER_ERROR  # light: the errors module imports nothing

PROG = "python -m engine.search"  # `clade search` passes its own name (clade/cli.py)


class _OneLineParser(argparse.ArgumentParser):
    """argparse, but a bad flag ends in one line (not usage + error) and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USER_ERROR, f"error: {message} (see --help)\n")


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    """The command's own options, then every setting's flag, generated from its declaration (engine/config)."""
    from clade.version import add_version_flag
    from engine.config.arguments import add_settings

    p = _OneLineParser(
        prog=prog,
        description="Search for better agents: a tree of agent variants in a DuckDB archive, "
        "expanded by a policy (HGM by default), mutated by the offline mutator, evaluated in sandboxes.",
    )
    p.add_argument("--resume", metavar="RUN", help="continue a stopped run (its folder or archive file)")
    p.add_argument(
        "--resume-from",
        metavar="SNAPSHOT",
        help="a new run (in --run-dir) that continues the tree "
        "of a snapshot made by python -m engine.snapshot export; --budget counts its evaluations too",
    )
    p.add_argument("--quiet", action="store_true", help="no live progress display")
    add_version_flag(p)
    add_settings(p)
    return p


def main(argv: Sequence[str] | None = None, prog: str = PROG) -> int:
    args = build_parser(prog).parse_args(argv)
    from engine.errors import UserError

    try:
        from engine.front.run import run_from_args

        return run_from_args(args)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
