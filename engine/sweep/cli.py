"""`clade sweep`: a grid of searches (settings x seeds) on any task, side by side or as cluster jobs, resumably;
`clade sweep show SWEEP`: which setting is better, and how sure.

    clade sweep --task my_task --grid policy=hgm,dgm,openevolve --seeds 5 --budget 60
    clade sweep --config sweep.toml                     # a run file with a [sweep] table (engine/sweep/plan.py)
    clade sweep --resume sweeps/my_task-policy-20261202-101500
    clade sweep show sweeps/my_task-policy-20261202-101500 --baseline hgm

Every flag of `clade search` sets what the cells share; `--grid SETTING=V1,V2` (repeatable) makes a setting an
axis. Giving the same command again resumes the unfinished sweep it started (`--new` starts another).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from engine.errors import EXIT_INTERRUPTED, EXIT_USER_ERROR, UserError
from engine.front.one_line import OneLineParser

PROG = "clade sweep"
EXIT_CELLS_FAILED = 1
RESUME_MAY = ("parallel", "max_cost", "quiet", "baseline")  # what a resumed sweep may change


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    from clade.version import add_version_flag
    from engine.config.arguments import add_settings
    from engine.config.settings import positive_int
    from engine.sweep.where import CELLS_ON

    p = OneLineParser(
        prog=prog,
        usage="%(prog)s [--grid SETTING=V1,V2 ...] [--seeds N] [OPTION ...]  |  %(prog)s show SWEEP",
        description="Run a grid of searches (each setting of --grid x each seed), each an ordinary run folder under "
        "one sweep folder, and say which setting is better and how sure (clade sweep show SWEEP).",
        conflict_handler="resolve",  # the sweep's --max-cost and --run-dir replace the search's
    )
    sweep = p.add_argument_group("sweep")
    sweep.add_argument(
        "--grid",
        action="append",
        default=[],
        metavar="SETTING=V1,V2",
        help="an axis: a setting of clade search (its name or flag) and the values to try; repeat for more axes",
    )
    sweep.add_argument(
        "--seeds", metavar="N|S1,S2", help="N seeds from --seed, or the seeds listed (default: 5 from --seed)"
    )
    sweep.add_argument(
        "--parallel",
        type=positive_int,
        metavar="P",
        help="cells at once (default: the CPUs over each cell's workers here; every cell on a cluster)",
    )
    sweep.add_argument("--cells-on", choices=CELLS_ON, default=None, help="where each cell runs (default: local)")
    sweep.add_argument(
        "--baseline", metavar="GROUP", help="the group the others are compared with (default: the first)"
    )
    sweep.add_argument("--sweep-dir", default="sweeps", metavar="DIR", help="folder of sweeps (default: sweeps)")
    sweep.add_argument("--resume", metavar="SWEEP", help="finish a stopped sweep: its unfinished cells only")
    sweep.add_argument("--new", action="store_true", help="start a new sweep even where the same one is unfinished")
    sweep.add_argument(
        "--config", metavar="FILE", help="a run file; its [sweep] table may give seeds, baseline, parallel, grid"
    )
    sweep.add_argument("--quiet", action="store_true", help="no line per cell; only the table at the end")
    add_version_flag(p)
    add_settings(p)
    sweep.add_argument(
        "--max-cost",
        type=float,
        metavar="USD",
        help="the whole sweep's model spend in dollars: each cell starts with a share of what is left",
    )
    p.add_argument("--run-dir", help=argparse.SUPPRESS)  # refused: a sweep's runs live in its cells
    return p


def main(argv: Sequence[str] | None = None, prog: str = PROG) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["show"]:
        from engine.sweep.show import main as show_main

        return show_main(args_list[1:], prog=f"{prog} show")
    args = build_parser(prog).parse_args(args_list)
    try:
        return _run(args)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR


def _run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from engine.sweep.manifest import read_manifest, write_manifest

    if args.run_dir is not None:
        raise UserError("a sweep keeps each cell's run in its own folder: give --sweep-dir for where sweeps go")
    if args.resume:
        _refuse_with_resume(args)
        sweep = read_manifest(args.resume)
        changed = {"parallel": args.parallel, "max_cost": args.max_cost, "baseline": args.baseline}
        changed = {k: v for k, v in changed.items() if v is not None}
        if changed:
            sweep = replace(sweep, **changed)
            write_manifest(sweep)
    else:
        sweep = _new_or_unfinished(args)
        if sweep is None:
            return 0
    return _session(sweep, args.quiet)


def _refuse_with_resume(args: argparse.Namespace) -> None:
    from engine.config.arguments import given

    if args.grid or args.seeds or args.config or args.new or args.cells_on:
        raise UserError("--resume finishes the sweep as it was made: give only --parallel, --max-cost, --baseline")
    settings = [name for name in given(args) if name not in RESUME_MAY]
    if settings:
        flag = "--" + settings[0].replace("_", "-")
        raise UserError(f"{flag} cannot be set with --resume: the sweep's cells keep their settings")


def found(argv: Sequence[str]):
    """The sweep folder `clade sweep ARGV` made or would go on with (the latest of the same grid and settings
    under its --sweep-dir), or None: what a script that ran the command reads afterwards."""
    from engine.sweep.plan import same_unfinished

    args = build_parser().parse_args(list(argv))
    unfinished, finished = same_unfinished(_planned(args), args.sweep_dir)
    return unfinished or finished


def _new_or_unfinished(args: argparse.Namespace):
    """The sweep the command asks for: a new one, or the unfinished one this same command started (None: the
    same sweep is already done, and said so)."""
    from engine.sweep.plan import make, same_unfinished

    sweep = _planned(args)
    if not args.new:
        unfinished, finished = same_unfinished(sweep, args.sweep_dir)
        if unfinished is not None:
            print(f"The same sweep is unfinished in {unfinished.folder}: going on with it (--new starts another).")
            return unfinished
        if finished is not None:
            print(
                f"The same sweep is done: {finished.folder} (clade sweep show {finished.folder}; --new runs it again)"
            )
            return None
    return make(sweep)


def _planned(args: argparse.Namespace):
    from engine.config.arguments import given
    from engine.sweep.plan import Asked, axes_of, plan, read_sweep_file

    settings = given(args)
    asked = Asked(
        settings={k: v for k, v in settings.items() if k != "max_cost"},
        axes=axes_of(args.grid),
        seeds=args.seeds,
        baseline=args.baseline,
        parallel=args.parallel,
        max_cost=args.max_cost,
        cells_on=args.cells_on or "local",
    )
    if args.config:
        asked = read_sweep_file(args.config, asked)
    return plan(asked, args.sweep_dir)


def _session(sweep, quiet: bool) -> int:
    from engine.config.arguments import config_of
    from engine.sweep.runner import run_sweep
    from engine.sweep.where import launcher

    cells = len(sweep.cells)
    axes = ", ".join(f"{a.name} = {', '.join(map(str, a.values))}" for a in sweep.axes) or "none"
    print(f"Sweep {sweep.folder}: {cells} cells ({axes}; seeds {', '.join(map(str, sweep.seeds))}), "
          f"{sweep.parallel} at once, on {sweep.cells_on}")  # fmt: skip
    say = (lambda line: None) if quiet else (lambda line: print("  " + line, flush=True))
    outcome = run_sweep(sweep, launcher(sweep.cells_on, config_of(dict(sweep.given))), say)
    resume = f"clade sweep --resume {sweep.folder}"
    if outcome.interrupted:
        print(f"interrupted: each running cell was stopped as Ctrl-C stops a search; go on: {resume}", file=sys.stderr)
        return EXIT_INTERRUPTED
    _show(sweep)
    if outcome.failed:
        names = ", ".join(outcome.failed)
        logs = f"{sweep.folder}/cells/<cell>/search.log"
        print(f"error: {len(outcome.failed)} cells failed ({names}); their logs: {logs}; after fixing the cause: "
              f"{resume}", file=sys.stderr)  # fmt: skip
        return EXIT_CELLS_FAILED
    if outcome.unfunded:
        print(f"the sweep's --max-cost is spent: {len(outcome.unfunded)} cells not run; with a larger cap: "
              f"{resume} --max-cost USD", file=sys.stderr)  # fmt: skip
        return EXIT_CELLS_FAILED
    return 0


def _show(sweep) -> None:
    """The sweep's table, differences and sentences (engine/sweep/show.py), as `clade sweep show` prints them."""
    from engine.sweep.show import main as show_main

    show_main([str(sweep.folder)])
