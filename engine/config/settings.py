"""A setting declared once: its default and everything the command line and the resume rules need to know of it.

    budget: int = setting(200, help="dev evaluations ...", on_resume="change", on_replay="original")
    seed: int = setting(0, help="random seed of the search", type=int)  # kept on --resume, refused by --replay

`setting` returns a dataclass field whose metadata is a `Setting`; the parser
(engine/config/arguments.py), what `--resume` and `--replay` may change, and the
mapping from parsed arguments to the configuration are all read from it, so a
new flag is one declaration. Only the standard library is imported here: the
parser is built from this metadata before `--help` prints.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from engine.errors import UserError
from engine.words import did_you_mean

OnResume = Literal["keep", "change"]
OnReplay = Literal["refuse", "change", "original"]
Choices = tuple[str, ...] | Callable[[], Sequence[str]]

_KEY = "clade.setting"


@dataclass(frozen=True)
class Setting:
    """What the command line and the resume rules know of one configuration field.

    on_resume: "keep" (a resumed run keeps its own; giving the flag is refused) or "change" (the new value
    holds from the resume on). on_replay: "refuse" (the replay repeats the original: giving it is an
    error), "change" (the replay's own value), "original" (the original's value runs; the flag is not
    consulted, as the replay follows the original's recorded events instead).
    """

    help: str
    on_resume: OnResume
    on_replay: OnReplay
    shown: str | None = None  # how the help states the default; None: the default's own value
    flag: str | None = None  # the flag, where it is not --<name with dashes>
    metavar: str | tuple[str, ...] | None = None
    choices: Choices | None = None  # the values it takes (a tuple, or a function that lists them lazily)
    known: Choices | None = None  # an open set's known names (built-in tasks): `{known}` in help lists them
    noun: str | None = None  # a refused choice says "unknown <noun> 'x'; choose one of: ..." (else "--x must be")
    type: Callable[[str], Any] | None = None  # argparse's conversion of the flag's text
    nargs: int | None = None
    switch: bool = False  # a flag without a value (store_true)
    repeat: bool = False  # a flag given once per value (argparse's append); the setting is a list


def setting(
    default: Any,
    *,
    help: str,
    on_resume: OnResume = "keep",
    on_replay: OnReplay = "refuse",
    **spelling: Any,
) -> Any:
    """A dataclass field with its `Setting` (the keyword arguments of `Setting` besides those named here).

    By default a setting is part of what a run is: a resumed run keeps its own and refuses the flag, and a
    replay, which repeats the original, refuses it too; a setting that may change says so."""
    meta = Setting(help=help, on_resume=on_resume, on_replay=on_replay, **spelling)
    return dataclasses.field(default=default, metadata={_KEY: meta})


@dataclass(frozen=True)
class Declared:
    """One declared setting as the generators see it: its field name, its default and its `Setting`."""

    name: str
    default: Any
    meta: Setting

    @property
    def flag(self) -> str:
        return self.meta.flag or "--" + self.name.replace("_", "-")

    def choices(self) -> tuple[str, ...] | None:
        return _listed(self.meta.choices)

    def known(self) -> tuple[str, ...] | None:
        """The names an open set knows (a folder may stand for a task too), or else its choices."""
        return _listed(self.meta.known) or self.choices()

    def help_text(self) -> str:
        """The declared help, `{known}` in it replaced by the names an open set knows (the built-in tasks)."""
        return self.meta.help.replace("{known}", ", ".join(self.known() or ()))

    def default_said(self) -> str:
        """The default as the help states it."""
        if self.meta.shown is not None:
            return self.meta.shown
        if self.default is None:
            return "none"
        if isinstance(self.default, bool):
            return "on" if self.default else "off"
        if isinstance(self.default, float):
            return f"{self.default:g}"
        return str(self.default)


def _listed(names: Choices | None) -> tuple[str, ...] | None:
    return tuple(names()) if callable(names) else names


def declared(section: type) -> Iterator[Declared]:
    """The settings a section (a dataclass) declares, in its order."""
    for f in dataclasses.fields(section):
        if _KEY in f.metadata:
            yield Declared(f.name, f.default, f.metadata[_KEY])


def check_choices(section: object) -> None:
    """A UserError (one line) for the first setting of `section` whose value is not one of its choices."""
    for item in declared(type(section)):
        choices = item.choices()
        value = getattr(section, item.name)
        if choices is None or value is None or value in choices:  # None: the setting is off
            continue
        raise UserError(refusal(item, value, choices))


def refusal(item: Declared, value: str, choices: Sequence[str]) -> str:
    """The one line that refuses `value`: the closest choice first, when one is close, then every choice."""
    hint = did_you_mean(value, choices)
    if item.meta.noun:
        return f"unknown {item.meta.noun} {value!r}{hint}; choose one of: {', '.join(choices)}"
    quoted = [repr(c) for c in choices]
    listed = ", ".join(quoted[:-1]) + f" or {quoted[-1]}" if len(quoted) > 1 else quoted[0]
    return f"{item.flag} must be {listed}, not {value!r}{hint}"


def positive_int(text: str) -> int:
    """An argparse type: a whole number of 1 or more (0 is refused rather than given a hidden meaning)."""
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value} (leave it out for the default)")
    return value


def one_model(flag: str, spec: str | None) -> None:
    """A UserError unless `spec` (when given) names exactly one model."""
    if spec is None:
        return
    from engine.mutators.model_choice import parse_models

    if len(parse_models(spec)) != 1:
        raise UserError(f"{flag} takes one model, not {spec!r}")
