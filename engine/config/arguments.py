"""The command line's settings, generated from their declarations (engine/config/settings.py).

From each setting's metadata: its flag in the group of its section (help text
ending with its default), the configuration a command line asks for, and what
`--resume`, `--resume-from` and `--replay` may change or refuse. Only argparse
and the light configuration modules are imported, so `--help` stays instant.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from typing import Any

from engine.config.run_config import RunConfig
from engine.config.settings import Declared, declared
from engine.errors import UserError


def help_line(item: Declared) -> str:
    """The setting's help (`{known}` in it: the names an open set knows), then its default; '%' doubled,
    since argparse formats help with %."""
    return f"{item.help_text()} (default: {item.default_said()})".replace("%", "%%")


def metavar(item: Declared) -> str | tuple[str, ...] | None:
    """The declared metavar; else a fixed list of choices, shown as {a,b,c} (one with a comma quoted);
    else argparse's own (NAME)."""
    if item.meta.metavar is not None:
        return item.meta.metavar
    choices = item.choices()
    return "{" + ",".join(repr(c) if "," in c else c for c in choices) + "}" if choices else None


def add_settings(parser: argparse.ArgumentParser) -> None:
    """Every setting's flag, in a group per section. Flags default to None: None means 'not given'."""
    for _, section in RunConfig.sections():
        group = parser.add_argument_group(section.title)
        for item in declared(section):
            if item.meta.switch:
                group.add_argument(item.flag, dest=item.name, action="store_true", default=None, help=help_line(item))
                continue
            spelled: dict[str, Any] = {"nargs": item.meta.nargs, "metavar": metavar(item)}
            if item.meta.type is not None:
                spelled["type"] = item.meta.type
            if item.meta.repeat:
                spelled["action"] = "append"
            group.add_argument(item.flag, dest=item.name, help=help_line(item), **spelled)


def given(args: argparse.Namespace, names: Iterable[str] | None = None) -> dict[str, Any]:
    """The settings the command line gave (of `names`, or of all), by name."""
    wanted = set(names) if names is not None else None
    return {
        item.name: getattr(args, item.name)
        for _, item in RunConfig.settings()
        if (wanted is None or item.name in wanted) and getattr(args, item.name, None) is not None
    }


def config_of(chosen: dict[str, Any]) -> RunConfig:
    """The defaults with the settings chosen (flags, a run file), unchecked; a model chosen means the LLM
    mutator, unless the mutator is chosen too."""
    if chosen.get("model") and "mutator" not in chosen:
        chosen = {**chosen, "mutator": "llm"}
    return RunConfig().with_overrides(**chosen)


def config_from_args(args: argparse.Namespace) -> RunConfig:
    """The checked configuration of a new run: the defaults, with what the command line gave."""
    return config_of(given(args)).validate()


def _named(on_resume: str | None = None, on_replay: str | None = None) -> tuple[Declared, ...]:
    return tuple(
        item
        for _, item in RunConfig.settings()
        if (on_resume is None or item.meta.on_resume == on_resume)
        and (on_replay is None or item.meta.on_replay == on_replay)
    )


def settings_kept() -> tuple[Declared, ...]:
    """The settings that define what a run is: a resumed (or restored) run keeps its own."""
    return _named(on_resume="keep")


def refuse_given(args: argparse.Namespace, items: Iterable[Declared], why: str, spare: tuple[str, ...] = ()) -> None:
    """A UserError '--flag <why>' for the first of `items` the command line gave (but those in `spare`)."""
    for item in items:
        if item.name not in spare and getattr(args, item.name, None) is not None:
            raise UserError(f"{item.flag} {why}")


def resumed_config(stored: RunConfig, args: argparse.Namespace) -> RunConfig:
    """A stopped run's configuration going on, with what may change when it does (how much to spend, how fast,
    how much failure to bear) as the command line gives it. The flags it keeps are refused before (`refuse_given`)."""
    return stored.with_overrides(**given(args, (item.name for item in _named(on_resume="change"))))


def replay_refused() -> tuple[Declared, ...]:
    """The settings a replay repeats from its original: giving one is an error."""
    return _named(on_replay="refuse")


def refuse_replayed(args: argparse.Namespace) -> None:
    """A UserError for the first flag that a replay repeats from its original."""
    refuse_given(args, replay_refused(), "cannot be set with --replay: the replay repeats the original")


def replayed_config(stored: RunConfig, args: argparse.Namespace, original: str) -> RunConfig:
    """The original run's configuration to run again from `original`'s archive, with what a replay may change.
    The rest (its budget, limits, breaker) stays the original's: the replay follows the recorded events."""
    changed = given(args, (item.name for item in _named(on_replay="change")))
    return stored.with_overrides(**{**changed, "replay": original})
