"""`clade sweep show SWEEP [--baseline GROUP]`: where a sweep stands and what it says.

    clade sweep show sweeps/binpack-policy-20250101-120000
    clade sweep show sweeps/binpack-policy-20250101-120000 --baseline greedy

It prints the sweep's header (folder, task, grid, seeds, cells done / running / to go), the table of its
groups (cells done, mean holdout score with its 95 % bootstrap interval, seeds won, the task's raw metric,
mean spend and wall time), the paired differences from the baseline group, one sentence per comparison,
and the commands to see more (the HTML report, a cell's run). The statistics use the cells that are done;
the others are counted and said. A bad folder or an unknown group: one line, exit code 2.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from engine.errors import EXIT_USER_ERROR, UserError
from engine.front.one_line import OneLineParser
from engine.words import plural

if TYPE_CHECKING:
    from engine.sweep.results import SweepResults
    from engine.sweep.stats import Difference, Estimate, GroupRow

PROG = "clade sweep show"


def build_parser(prog: str = PROG) -> OneLineParser:
    p = OneLineParser(
        prog=prog,
        intermixed=True,
        description="Where a sweep stands and which of its settings did better, and how sure that is.",
    )
    p.add_argument("sweep", metavar="SWEEP", help="a sweep folder (what clade sweep made, under sweeps/)")
    p.add_argument(
        "--baseline",
        metavar="GROUP",
        help="the group the others are compared with, as the table names it (default: the sweep's baseline, "
        "else its first group)",
    )
    return p


def main(argv: Sequence[str] | None = None, prog: str = PROG) -> int:
    args = build_parser(prog).parse_args(argv)
    from archive import ArchiveError
    from engine.front.console import make_console

    console = make_console()
    try:
        show(args.sweep, args.baseline, console)
    except (UserError, ArchiveError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    except BrokenPipeError:  # `... | head`
        return 0
    return 0


def show(path: str | Path, baseline: str | None, console) -> None:
    """Print everything `clade sweep show` prints about the sweep at `path`."""
    from engine.front.console import print_whole
    from engine.sweep import stats
    from engine.sweep.results import read_results

    results = read_results(path)
    sweep = results.sweep
    chosen = stats.choose_baseline(sweep.groups, baseline, sweep.baseline)
    outcomes = results.outcomes()
    rows = stats.group_table(outcomes, results.cells_per_group())
    differences = stats.paired_differences(outcomes, sweep.groups, chosen)
    _print_lines(console, header_lines(results, str(path)))
    print_whole(console, group_table(rows, results.raw_metric, chosen))
    if differences:
        print_whole(console, differences_table(differences))
        _print_lines(console, [d.sentence for d in differences])
    _print_lines(console, ["", *more_lines(results, str(path))])


def header_lines(results: SweepResults, given: str) -> list[str]:
    """The sweep's folder, task, grid, seeds and cells by where they stand."""
    sweep = results.sweep
    counts = results.counts()
    grid = "; ".join(f"{a.name} = {', '.join(map(str, a.values))}" for a in sweep.axes) or "seeds only"
    standing = f"{counts['done']} done, {counts['running']} running, {counts['to go']} to go"
    if counts["damaged"]:
        standing += f", {counts['damaged']} damaged (their archives do not read)"
    lines = [
        f"Sweep {given}",
        f"  task    {sweep.task}",
        f"  grid    {grid} ({plural(len(sweep.groups), 'group')})",
        f"  seeds   {', '.join(map(str, sweep.seeds))}",
        f"  cells   {len(results.cells)}: {standing}",
    ]
    if counts["done"] < len(results.cells):
        lines.append(f"  The statistics below use the {plural(counts['done'], 'cell')} done.")
    return lines


def estimate_text(e: Estimate) -> str:
    """'0.512 [0.501, 0.520]', '0.512 (one seed: no interval)', or '-'."""
    if e.mean is None:
        return "-"
    return f"{e.mean:.{_digits(e)}f} {interval_text(e)}"


def interval_text(e: Estimate) -> str:
    """'[0.501, 0.520]', '(one seed: no interval)', or '-' for no value."""
    if e.mean is None:
        return "-"
    if e.low is None or e.high is None:
        return "(one seed: no interval)"
    digits = _digits(e)
    return f"[{e.low:.{digits}f}, {e.high:.{digits}f}]"


def _digits(e: Estimate) -> int:
    from engine.sweep.stats import decimals

    return decimals(*(v for v in (e.mean, e.low, e.high) if v is not None))


def money(value: float | None) -> str:
    if value is None:
        return "-"
    return "$0" if value == 0 else f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def number(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def group_columns(raw_metric: str | None) -> list[str]:
    shown = ["group", "done", "holdout score [95% CI]", "seeds won"]
    if raw_metric:
        shown.append(f"holdout {raw_metric}")
    return [*shown, "spend", "wall s"]


def group_cells(row: GroupRow, raw_metric: str | None, baseline: str) -> list[str]:
    """A group's row as text, one per `group_columns` column."""
    name = f"{row.group} (baseline)" if row.group == baseline else row.group
    cells = [name, f"{row.done}/{row.cells}", estimate_text(row.score), row.seeds_won]
    if raw_metric:
        cells.append(number(row.raw))
    return [*cells, money(row.dollars), number(row.wall_s, 1)]


def group_table(rows: Sequence[GroupRow], raw_metric: str | None, baseline: str):
    from rich.table import Table

    table = Table(title="Groups (mean over seeds done)", title_justify="left")
    for name in group_columns(raw_metric):
        table.add_column(name, justify="left" if name == "group" else "right", no_wrap=True)
    for row in rows:
        table.add_row(*group_cells(row, raw_metric, baseline if len(rows) > 1 else ""))  # one group: no baseline
    return table


def difference_cells(d: Difference) -> list[str]:
    e = d.estimate
    mean = "-" if e.mean is None else f"{e.mean:.{_digits(e)}f}"
    return [d.group, d.baseline, str(d.paired), mean, interval_text(e), d.verdict]


DIFFERENCE_COLUMNS = ("group", "baseline", "paired seeds", "mean difference", "95% CI", "verdict")


def differences_table(differences: Sequence[Difference]):
    from rich.table import Table

    table = Table(title="Paired differences (group - baseline, by seed)", title_justify="left")
    for name in DIFFERENCE_COLUMNS:
        table.add_column(name, justify="left" if name in ("group", "baseline", "verdict") else "right", no_wrap=True)
    for d in differences:
        table.add_row(*difference_cells(d))
    return table


def more_lines(results: SweepResults, given: str) -> list[str]:
    """The commands to see more: the HTML report, and a cell's run."""
    quoted = shlex.quote(given)
    lines = [f"report: clade report {quoted}"]
    pattern = f"cells:  clade runs show {quoted}/cells/<cell>"  # a cell's folder stands for its run (archive_path)
    started = [c.run_path for c in results.cells if c.run_path is not None]
    if not started:
        return [*lines, f"{pattern}  (no cell has started yet)"]
    example = Path(given) / "cells" / started[0].parent.name
    return [*lines, f"{pattern}  (e.g. clade runs show {shlex.quote(str(example))})"]


def _print_lines(console, lines: Sequence[str]) -> None:
    for line in lines:  # soft_wrap: a path stays one line, to copy whole
        console.print(line, soft_wrap=True, highlight=False, markup=False)
