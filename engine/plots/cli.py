"""The command lines behind scripts/plot_lineage.py, scripts/plot_progress.py and scripts/plot_arena.py.

Each reads archives read-only, computes the plot's data (a pure function),
draws it and writes PNG and SVG. An existing file of the same name is
replaced only if one of these scripts wrote it (its metadata says so);
anything else needs `--force`. Bad input ends in one line and exit code 2.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path

from clade.version import add_version_flag
from engine.errors import EXIT_USER_ERROR
from engine.front.one_line import OneLineParser
from engine.words import plural


def _run_folder(path: str) -> Path:
    p = Path(path)
    return p if p.is_dir() else p.parent


def _report(written: list[tuple[Path, bool]], seconds: float, runs: Sequence[str] = ()) -> None:
    from engine.runinfo.reading import live_status

    for path, replaced in written:
        print(f"wrote {path}" + (" (replaced the previous plot)" if replaced else ""))
    for run in runs:  # a running search's plot is of its live copy: say how old
        said = live_status(run)
        if said:
            print(said)
    print(f"({seconds:.1f} s)")


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return EXIT_USER_ERROR


def _drawn(work):
    """work() with what a user can cause (not an archive, a file we did not write, no matplotlib) said in one
    line: (its result, None), or (None, the exit code)."""
    from archive import ArchiveError
    from engine.plots.output import PlotPathError

    try:
        return work(), None
    except (ArchiveError, PlotPathError) as exc:
        return None, _fail(str(exc))
    except OSError as exc:
        from archive.errors import is_disk_full
        from engine.errors import no_space

        if not is_disk_full(exc):
            raise
        where = Path(exc.filename).resolve().parent if exc.filename else "the plot's folder"
        return None, _fail(str(no_space(where, "drawing the plot")))
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in ("matplotlib", "PIL"):
            from engine.plots.output import needs_viz

            return None, _fail(needs_viz())
        raise


def lineage_parser(prog: str = "python scripts/plot_lineage.py") -> OneLineParser:
    """`clade plot lineage`'s options (also the reference page's source: docs/hooks)."""
    p = OneLineParser(
        intermixed=True,
        prog=prog,
        description="Draw a run's lineage tree (root on top; colour: mean dev score; size: dev "
        "evaluations; the path to the final node in red) as lineage.png and lineage.svg "
        "(hover a node in the SVG for its change, mean and evaluations).",
    )
    p.add_argument("run", help="a run folder or its archive.duckdb")
    p.add_argument("--out", help="folder to write into (default: the run's folder)")
    p.add_argument("--formats", default="png,svg", help="png, svg or png,svg (default)")
    p.add_argument(
        "--labels",
        type=int,
        default=10,
        help="in trees over 40 nodes, label this many best nodes besides the final path (default: 10)",
    )
    p.add_argument(
        "--force", action="store_true", help="replace files of the same name that these scripts did not write"
    )
    add_version_flag(p)
    return p


def lineage_main(argv: Sequence[str] | None = None, prog: str = "python scripts/plot_lineage.py") -> int:
    args = lineage_parser(prog).parse_args(argv)
    from engine.plots.output import parse_formats, plan_outputs

    started = time.perf_counter()

    def work():
        formats = parse_formats(args.formats)
        from engine.plots.lineage import lineage_data

        data = lineage_data(args.run, max_labels=max(args.labels, 0))
        out_dir = Path(args.out) if args.out else _run_folder(args.run)
        planned = plan_outputs(out_dir, "lineage", formats, "lineage", args.force)
        from engine.plots.lineage_render import render_lineage

        render_lineage(data, [path for path, _ in planned])
        return data, planned

    done, code = _drawn(work)
    if done is None:
        return code
    data, planned = done
    final = f", final node {data.final_node}" if data.final_node is not None else ", no final node yet"
    print(f"lineage of {data.run_id}: {plural(len(data.nodes), 'node')}{final}")
    _report(planned, time.perf_counter() - started, [args.run])
    return 0


def progress_parser(prog: str = "python scripts/plot_progress.py") -> OneLineParser:
    """`clade plot progress`'s options (also the reference page's source: docs/hooks)."""
    p = OneLineParser(
        intermixed=True,
        prog=prog,
        description="Draw best-so-far and final-rule score against dev evaluations (and against "
        "LLM dollars when a run paid for calls), runs overlaid; runs that share a config "
        "(all but seed, run folder, workers, budget, sandbox) get a mean and a +-1 sd band.",
    )
    p.add_argument("runs", nargs="+", metavar="RUN", help="run folders or archive.duckdb files")
    p.add_argument(
        "--out",
        help="folder to write progress.png/.svg into (default: the run's folder for one run, "
        "the current folder for several)",
    )
    p.add_argument("--formats", default="png,svg", help="png, svg or png,svg (default)")
    p.add_argument(
        "--min-evals",
        type=int,
        help="best-so-far counts nodes with at least this many dev "
        "evaluations (default: all of the run's dev instances)",
    )
    p.add_argument(
        "--force", action="store_true", help="replace files of the same name that these scripts did not write"
    )
    add_version_flag(p)
    return p


def progress_main(argv: Sequence[str] | None = None, prog: str = "python scripts/plot_progress.py") -> int:
    args = progress_parser(prog).parse_args(argv)
    from engine.plots.output import parse_formats, plan_outputs

    if args.min_evals is not None and args.min_evals < 1:
        return _fail(f"--min-evals must be 1 or more, not {args.min_evals}")
    started = time.perf_counter()

    def work():
        formats = parse_formats(args.formats)
        from engine.plots.progress import group_series, progress_data

        series = progress_data(args.runs, min_evals=args.min_evals)
        out_dir = Path(args.out) if args.out else (_run_folder(args.runs[0]) if len(args.runs) == 1 else Path("."))
        planned = plan_outputs(out_dir, "progress", formats, "progress", args.force)
        from engine.plots.progress_render import render_progress

        groups = group_series(series)
        render_progress(series, [path for path, _ in planned], groups)
        return series, groups, planned

    done, code = _drawn(work)
    if done is None:
        return code
    series, groups, planned = done
    import numpy as np

    for s in series:
        best = s.best[~np.isnan(s.best)]
        reached = (
            f"best-so-far {best[-1]:.3f}" if len(best) else f"no node with {plural(s.min_evals, 'dev evaluation')}"
        )
        print(f"{s.run_id}: {plural(len(s.evals), 'dev evaluation')}, {reached}")
    for g in groups:
        if len(g.members) > 1:
            print(f"group {g.label}: mean and band over {plural(len(g.evals), 'evaluation')}")
    _report(planned, time.perf_counter() - started, args.runs)
    return 0


def arena_parser(prog: str = "python scripts/plot_arena.py") -> OneLineParser:
    """`clade plot arena`'s options (also the reference page's source: docs/hooks)."""
    p = OneLineParser(
        intermixed=True,
        prog=prog,
        description="Draw an arena run's scores over rounds: each round's champion on the original "
        "dev set, on the evolved dev set (as of that round) and on holdout, and the dev set's size, "
        "as arena.png and arena.svg.",
    )
    p.add_argument("run", help="an arena run's folder or its archive.duckdb")
    p.add_argument("--out", help="folder to write into (default: the run's folder)")
    p.add_argument("--formats", default="png,svg", help="png, svg or png,svg (default)")
    p.add_argument(
        "--force", action="store_true", help="replace files of the same name that these scripts did not write"
    )
    add_version_flag(p)
    return p


def arena_main(argv: Sequence[str] | None = None, prog: str = "python scripts/plot_arena.py") -> int:
    args = arena_parser(prog).parse_args(argv)
    from engine.plots.output import parse_formats, plan_outputs

    started = time.perf_counter()

    def work():
        formats = parse_formats(args.formats)
        from engine.plots.arena import arena_info, render_arena

        info = arena_info(args.run)
        out_dir = Path(args.out) if args.out else _run_folder(args.run)
        planned = plan_outputs(out_dir, "arena", formats, "arena", args.force)
        render_arena(info, [path for path, _ in planned])
        return info, planned

    done, code = _drawn(work)
    if done is None:
        return code
    info, planned = done
    last = info.rounds[-1]
    said = {"original": last.original, "evolved": last.evolved, "holdout": last.holdout}
    scores = ", ".join(f"{k} {'-' if v is None else f'{100 * v:.1f}%'}" for k, v in said.items())
    print(
        f"arena of {info.run_id}: {plural(len(info.rounds), 'round')}; round {last.round} champion node "
        f"{last.champion}: {scores}; dev set {plural(last.dev_instances, 'instance')}"
    )
    _report(planned, time.perf_counter() - started, [args.run])
    return 0
