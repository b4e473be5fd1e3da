"""`clade data fetch polyglot`: bring a benchmark's data (and what its tests run on) into Clade's cache now.

    clade data fetch polyglot          # the exercises at the pinned commit, verified; Jest and Babel from npm
    clade data fetch polyglot --url U  # from a mirror or a local archive (file:///path/to/archive.tar.gz)
    clade data where polyglot          # the folder a run would read, or how to get one

A run fetches on first use too; this is for a machine that has network now and will not later.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from engine.errors import EXIT_USER_ERROR, UserError

DATASETS = ("polyglot",)


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def fetch(name: str, url: str | None) -> None:
    import os

    from tasks.polyglot import source

    if os.environ.get(source.DIR_VARIABLE):
        root = source.exercises_dir(fetch=False)
        print(f"{source.DIR_VARIABLE} names {root}: nothing to fetch")
    elif url is None and (source.fetched_dir() / source.VERIFIED).is_file():
        print(f"the Polyglot exercises are already in {source.fetched_dir()} (verified)")
    else:
        source.fetch_exercises(url=url, say=_say)
    from tasks.polyglot.toolchains import jest_modules

    try:
        print(f"Jest and Babel for the JavaScript exercises: {jest_modules(say=_say)}")
    except UserError as exc:  # the other five languages still run; a run naming JavaScript says it again
        print(f"warning: {exc}", file=sys.stderr)


def where(name: str) -> None:
    from tasks.polyglot import source

    print(source.exercises_dir(fetch=False))


def build_parser(prog: str = "clade data") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    fetching = commands.add_parser("fetch", help="fetch a benchmark's data into Clade's cache, verified")
    fetching.add_argument("name", choices=DATASETS)
    fetching.add_argument("--url", help="the archive to fetch instead of the pinned commit's on GitHub")
    wherein = commands.add_parser("where", help="the folder a run reads a benchmark's data from")
    wherein.add_argument("name", choices=DATASETS)
    return parser


def main(argv: Sequence[str] | None = None, prog: str = "clade data") -> int:
    args = build_parser(prog).parse_args(argv)
    try:
        if args.command == "fetch":
            fetch(args.name, args.url)
        else:
            where(args.name)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    return 0


if __name__ == "__main__":
    sys.exit(main())
