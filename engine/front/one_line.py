"""argparse as every command here uses it: each mistake a user can make ends in one line and exit code 2.

A misspelt flag is answered with the closest one (`--buget` -> "did you mean --budget?"), a misspelt
choice (a subcommand) with the closest choice; a parser made with `intermixed=True` takes its options
anywhere among its positionals (`runs sql RUN --csv "SELECT 1"`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, NoReturn

from engine.errors import EXIT_USER_ERROR
from engine.words import did_you_mean


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a bad flag ends in one line (not usage + error) and exit code 2, with a suggestion."""

    def __init__(self, *args: Any, intermixed: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.intermixed = intermixed

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USER_ERROR, f"error: {message} (see --help)\n")

    def parse_known_args(  # type: ignore[override]  # typeshed overloads it on the namespace's type
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        if not self.intermixed:
            return super().parse_known_args(args, namespace)
        self.intermixed = False  # parse_known_intermixed_args calls this method twice, for the plain parse
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self.intermixed = True

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            self.error(_unknown(extras, self, parsed))
        return parsed

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        choices = action.choices
        if choices is None or value in choices:
            return
        names = [str(c) for c in choices]
        hint = did_you_mean(value, names)
        if isinstance(action, argparse._SubParsersAction):  # "unknown command", not "argument {a,b,c}: ..."
            raise argparse.ArgumentError(None, f"unknown command {value!r}{hint}; choose from {', '.join(names)}")
        raise argparse.ArgumentError(action, f"invalid choice: {value!r}{hint}; choose from {', '.join(names)}")


def _flags(parser: argparse.ArgumentParser, parsed: argparse.Namespace | None) -> list[str]:
    """The flags the command line could have meant: the parser's, and those of the subcommand it chose
    (`parsed` None: of every subcommand)."""
    flags = [flag for action in parser._actions for flag in action.option_strings]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if parsed is None or getattr(parsed, action.dest, None) == name:
                    flags += _flags(sub, parsed)
    return flags


def _unknown(extras: list[str], parser: argparse.ArgumentParser, parsed: argparse.Namespace) -> str:
    """The message for what no argument took: the first unknown flag and the closest known one, if any."""
    for extra in extras:
        if extra.startswith("-") and len(extra) > 1 and not extra[1:2].isdigit():
            flag = extra.split("=", 1)[0]
            here = _flags(parser, parsed)
            hint = did_you_mean(flag, here, quote=False)
            if flag in here or (not hint and flag in _flags(parser, None)):  # another subcommand's, or misplaced
                return f"{flag} is not an option here"
            return f"unknown flag {flag}{hint}"
    return f"unrecognized arguments: {' '.join(extras)}"
