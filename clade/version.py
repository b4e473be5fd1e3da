"""The `--version` flag every command shares; its text comes from one place, clade.__version__."""

from __future__ import annotations

import argparse


def version_text() -> str:
    from clade import __version__

    return f"clade {__version__}"


def add_version_flag(parser: argparse.ArgumentParser) -> None:
    """`--version`: print `clade X.Y.Z` and exit 0 (argparse's own version action)."""
    parser.add_argument("--version", action="version", version=version_text(), help="print the version and exit")
