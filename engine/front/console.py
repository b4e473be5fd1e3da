"""The rich console every command prints through: lines never wrap, tables fit.

A line holding a path or a command must survive a copy and paste, so no line
is soft-wrapped, whatever the width: output to a pipe or a file (80 columns
by default) keeps `Resume: clade search --resume runs/...` whole.
Tables are laid out at the terminal's width, or, when the output is not a
terminal, at COLUMNS or 160 columns so that they are not crushed.
"""

from __future__ import annotations

import os
import sys


def make_console():
    from rich.console import Console

    width = None if sys.stdout.isatty() else int(os.environ.get("COLUMNS") or 0) or 160
    return Console(highlight=False, width=width, soft_wrap=True)


def print_whole(console, table) -> None:
    """Print a table at its natural width when it is wider than the console: a cell holding a path is
    neither wrapped nor cut (a terminal may fold the long line; copying it still gives the whole path)."""
    from rich.measure import Measurement

    natural = Measurement.get(console, console.options.update_width(100_000), table).maximum
    width = console.width
    console.width = max(width, natural)  # print(width=...) would be capped at the console's width
    try:
        console.print(table)
    finally:
        console.width = width
