"""The HTML report of a run: one self-contained file (no network, no CDN) to read a search in a browser.

    python scripts/report.py runs/<run-id>              # -> runs/<run-id>/report.html
    python scripts/report.py runs/<run-id> --out r.html

The page shows the run's config and spend at the top and its lineage tree
(inline SVG, root on top, colour by mean dev score, size by evaluations);
clicking a node opens a panel with its description, diff against its parent,
score per instance, the steps of the agent that made it (a self-improving run)
and of its own agent on each instance (table trajectory_steps), the model's
prompts and answers, and its evaluation logs.
data.py reads the archive, tree.py draws the tree, page.py writes the HTML.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from engine.whole_file import write_text_whole

EXIT_USER_ERROR = 2
PROG = "python scripts/report.py"  # `clade report` passes its own name (clade/cli.py)


def write_report(run: str | Path, out: str | Path | None = None) -> Path:
    """Write the report of `run` (a run folder or its archive.duckdb) to `out` (default: <run folder>/report.html)."""
    from engine.report.data import report_data
    from engine.report.page import render_page
    from engine.runinfo.reading import open_read_only

    with open_read_only(run) as archive:
        data = report_data(archive)
        folder = Path(archive.path).parent
    target = Path(out) if out else folder / "report.html"
    html = render_page(data)
    target.parent.mkdir(parents=True, exist_ok=True)
    write_text_whole(target, html)
    return target


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    """The report command's options (also the reference page's source: docs/hooks)."""
    from clade.version import add_version_flag
    from engine.front.one_line import OneLineParser

    p = OneLineParser(
        prog=prog,
        intermixed=True,
        description="Write one self-contained HTML report of a run (works offline).",
    )
    p.add_argument("run", metavar="RUN", help="a run folder or its archive.duckdb, or a sweep folder (clade sweep)")
    p.add_argument("--out", help="the HTML file to write (default: <run folder>/report.html, <sweep>/report.html)")
    add_version_flag(p)
    return p


def main(argv: Sequence[str] | None = None, prog: str = PROG) -> int:
    args = build_parser(prog).parse_args(argv)
    from archive import ArchiveError
    from archive.errors import is_disk_full
    from engine.errors import UserError, no_space
    from engine.sweep.manifest import is_sweep

    try:
        if is_sweep(args.run):  # a sweep's folder: its own report (engine/sweep/report_page.py)
            from engine.sweep.report_page import write_report as write_sweep_report

            target = write_sweep_report(args.run, args.out)
        else:
            target = write_report(args.run, args.out)
    except (ArchiveError, OSError, UserError) as exc:
        said: Exception = exc
        if is_disk_full(exc):
            where = Path(args.out).parent if args.out else Path(args.run)
            said = no_space(where.resolve(), "writing the report")
        print(f"error: {said}", file=sys.stderr)
        return EXIT_USER_ERROR
    size = target.stat().st_size
    print(f"Report -> {target} ({size / 1e6:.1f} MB)" if size >= 1e5 else f"Report -> {target} ({size // 1024} KB)")
    return 0
