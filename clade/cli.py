"""The `clade` command: one entry for what `python -m engine.search`, `python -m engine.runs`,
`python -m engine.snapshot` and `scripts/*.py` do (each keeps working; this only dispatches to them).

    clade search [flags]                     # python -m engine.search
    clade sweep --grid policy=hgm,dgm --seeds 5 [flags];  clade sweep show SWEEP
    clade runs list|show|compare|best|sql|serve|export ...
    clade snapshot export|verify|restore ...
    clade plot lineage|progress|arena RUN
    clade report RUN
    clade new-task DIR --format F
    clade data fetch polyglot

Each subcommand's own parser reads the rest of the line, so `clade search --help` is that command's help.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from importlib import import_module

from engine.errors import EXIT_USER_ERROR
from engine.words import did_you_mean

# name -> (module, function taking argv, one line for the overview); imported only when chosen
COMMANDS: dict[str, tuple[str, str, str]] = {
    "search": ("engine.front.cli", "main", "run a search (python -m engine.search)"),
    "runs": ("engine.runinfo.cli", "main", "list, show, compare, query, serve and export runs (python -m engine.runs)"),
    "sweep": ("engine.sweep.cli", "main", "a grid of searches (settings x seeds), compared (clade sweep show)"),
    "snapshot": ("engine.front.snapshot", "main", "export, verify and restore snapshots (python -m engine.snapshot)"),
    "report": ("engine.report", "main", "write a run's HTML report"),
    "new-task": ("clade.new_task", "main", "write a task folder to start from (OpenEvolve, ShinkaEvolve, ... format)"),
    "data": ("clade.data", "main", "fetch a benchmark's data into Clade's cache (clade data fetch polyglot)"),
}
PLOTS: dict[str, tuple[str, str, str]] = {
    "lineage": ("engine.plots.cli", "lineage_main", "the lineage tree (lineage.png, lineage.svg)"),
    "progress": ("engine.plots.cli", "progress_main", "best score against evaluations spent"),
    "arena": ("engine.plots.cli", "arena_main", "an arena run's two populations"),
}


def _overview() -> str:
    lines = ["usage: clade COMMAND [ARGS]   (clade COMMAND --help for a command's own)", "", "commands:"]
    named = [(name, about) for name, (_, _, about) in COMMANDS.items()]
    named += [(f"plot {name}", about) for name, (_, _, about) in PLOTS.items()]
    named += [("--version", "print the version and exit"), ("-h, --help", "show this help and exit")]
    width = max(len(name) for name, _ in named)
    lines += [f"  {name:<{width}}  {about}" for name, about in named[:-2]]
    lines += ["", "options:", *(f"  {name:<{width}}  {about}" for name, about in named[-2:])]
    return "\n".join(lines)


# each entry takes (argv, prog=...): its usage, help and errors then name the command as typed here
def _entry(table: dict[str, tuple[str, str, str]], name: str) -> Callable[..., int] | None:
    if name not in table:
        return None
    module, function, _ = table[name]
    return getattr(import_module(module), function)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(_overview())
        return 0 if args else EXIT_USER_ERROR
    if args[0] == "--version":
        from clade.version import version_text

        print(version_text())
        return 0
    command, rest = args[0], args[1:]
    if command == "plot":
        kind = rest[0] if rest else ""
        if kind in ("-h", "--help", "--version"):
            return main([kind])  # the overview lists the plots
        entry = _entry(PLOTS, kind)
        if entry is None:
            hint = did_you_mean(kind, PLOTS) if kind else ""
            print(f"error: clade plot needs one of {', '.join(PLOTS)} (got {kind or 'nothing'}){hint}", file=sys.stderr)
            return EXIT_USER_ERROR
        return entry(rest[1:], prog=f"clade plot {kind}")
    entry = _entry(COMMANDS, command)
    if entry is None:
        names = [*COMMANDS, "plot"]
        hint = did_you_mean(command, names)
        print(f"error: unknown command {command!r}{hint}; the commands: {', '.join(names)}", file=sys.stderr)
        return EXIT_USER_ERROR
    return entry(rest, prog=f"clade {command}")
