"""The command-line reference (docs/reference/cli.md), from the argparse parsers the commands themselves use.

Each parser becomes its usage, then a table of its options per argparse group (the search command has a
group per configuration section), then its subcommands, each the same way. Nothing is written by hand, so
the page cannot fall behind a flag.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from importlib import import_module

from markdown_text import cell, code

# (the command as a user types it, the module, the function there that returns its parser); a row per
# command: one line adds a command to the page. A row whose function is missing is a build warning.
PARSERS: tuple[tuple[str, str, str], ...] = (
    ("clade search", "engine.front.cli", "build_parser"),
    ("clade sweep", "engine.sweep.cli", "build_parser"),
    ("clade sweep show", "engine.sweep.show", "build_parser"),
    ("clade runs", "engine.runinfo.cli", "build_parser"),
    ("clade snapshot", "engine.front.snapshot", "build_parser"),
    ("clade report", "engine.report", "build_parser"),
    ("clade plot lineage", "engine.plots.cli", "lineage_parser"),
    ("clade plot progress", "engine.plots.cli", "progress_parser"),
    ("clade plot arena", "engine.plots.cli", "arena_parser"),
    ("clade new-task", "clade.new_task", "build_parser"),
    ("clade data", "clade.data", "build_parser"),
)


def builder(module: str, function: str) -> Callable[[], argparse.ArgumentParser] | None:
    """The parser-building function, or None where its module or the function does not exist."""
    try:
        found = getattr(import_module(module), function, None)
    except ModuleNotFoundError as exc:
        if exc.name is None or not module.startswith(exc.name):  # a missing dependency is not a missing module
            raise
        return None
    return found if callable(found) else None


def _invocation(action: argparse.Action, formatter: argparse.HelpFormatter) -> str:
    """`--flag` METAVAR (or `-f`, `--flag` METAVAR); a positional's name."""
    if not action.option_strings:
        return code(formatter._format_args(action, action.dest))  # e.g. RUN, [folder], RUN [RUN ...]
    flags = ", ".join(code(flag) for flag in action.option_strings)
    if action.nargs == 0:  # a switch
        return flags
    return f"{flags} {code(formatter._format_args(action, action.dest.upper()))}"


def _said_default(help_text: str) -> tuple[str, str | None]:
    """(the help without its closing "(default: ...)", what that said), or (the help, None): most help lines
    here end with their default in words (a setting's is generated so), which the Default column shows."""
    start = help_text.rfind("(default")
    if start < 0 or not help_text.endswith(")") or help_text.count("(", start) != help_text.count(")", start):
        return help_text, None
    said = help_text[start + len("(default") : -1].lstrip(":").strip()
    return help_text[:start].rstrip(), said


def _default(action: argparse.Action) -> str:
    if action.nargs == 0 or action.default in (None, argparse.SUPPRESS):
        return ""  # a switch is off unless given; None: not given
    value = action.default
    return code(" ".join(map(str, value)) if isinstance(value, list | tuple) else str(value))


def _choices(action: argparse.Action) -> str:
    """argparse's choices, else those a {a,b,c} metavar lists (the search's settings check theirs later)."""
    choices = action.choices
    if choices is None and isinstance(action.metavar, str) and action.metavar.startswith("{"):
        choices = action.metavar.strip("{}").split(",")
    return ", ".join(code(str(choice)) for choice in choices) if choices else ""


def _help_and_default(action: argparse.Action, formatter: argparse.HelpFormatter) -> tuple[str, str]:
    """The Description and Default cells: the default as the help says it in words, else argparse's value."""
    text = formatter._expand_help(action) if action.help else ""  # %(default)s filled, %% made %
    text, said = _said_default(text)
    return cell(text), cell(said) if said else _default(action)


def _shown(action: argparse.Action) -> bool:
    hidden = action.help == argparse.SUPPRESS or isinstance(action, argparse._HelpAction)
    return not hidden and not isinstance(action, argparse._SubParsersAction)


def _table(actions: list[argparse.Action], formatter: argparse.HelpFormatter) -> list[str]:
    """The group's table; its Choices column only where one of its options has choices."""
    rows = []
    for action in actions:
        description, default = _help_and_default(action, formatter)
        rows.append((_invocation(action, formatter), _choices(action), default, description))
    header = ("Option", "Choices", "Default", "Description")
    keep = [i for i in range(len(header)) if i != 1 or any(row[1] for row in rows)]
    return [
        "| " + " | ".join(header[i] for i in keep) + " |",
        "|" + " --- |" * len(keep),
        *("| " + " | ".join(row[i] for i in keep) + " |" for row in rows),
    ]


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """(name, one-line help, parser) of each subcommand, in the order they were added."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            found += [(name, helps.get(name, ""), sub) for name, sub in action.choices.items()]
    return found


def render(title: str, parser: argparse.ArgumentParser, level: int = 2, about: str = "") -> list[str]:
    """The Markdown of one command: heading, description, usage, an options table per group, subcommands."""
    parser.prog = title  # the command as typed through `clade`, whatever the module's own prog says
    formatter = parser._get_formatter()
    lines = ["#" * level + " " + title, ""]
    description = parser.description or about
    if description:
        lines += [cell(description), ""]
    lines += ["```text", parser.format_usage().strip(), "```", ""]
    for group in parser._action_groups:
        actions = [action for action in group._group_actions if _shown(action)]
        if actions:
            heading = group.title or "options"
            lines += ["#" * (level + 1) + " " + heading[0].upper() + heading[1:], ""]
            lines += [*_table(actions, formatter), ""]
    for name, help_text, sub in _subcommands(parser):
        lines += render(f"{title} {name}", sub, level + 1, help_text)
    return lines
