"""Run files: a run's configuration in TOML, one table per section, its keys the settings' field names.

    [search]
    policy = "dgm"
    budget = 40

Read with `tomllib` and checked against the declarations (engine/config/settings.py): the sections of
RunConfig, each section's declared fields and their annotated types; nothing here lists a setting, so a new
setting works in run files with no extra line. Written with `tomli-w` (imported only when writing), each
setting under its help. Every refusal is a UserError of one line naming the file and the key.
"""

from __future__ import annotations

import argparse
import difflib
import textwrap
import types
import typing
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.config.arguments import config_of, given, replay_refused, settings_kept
from engine.config.run_config import RunConfig
from engine.config.settings import Declared, declared
from engine.errors import UserError


@dataclass(frozen=True)
class Key:
    """One setting as a run file spells it: its table, its declaration, and the TOML types it takes."""

    section: str
    item: Declared
    kinds: tuple[type, ...]  # the scalar types it takes (int, float, str, bool), or (list,) with `element`
    element: type | None  # the type of a list's items
    optional: bool  # None is a value (the file leaves the key out)

    @property
    def name(self) -> str:
        return self.item.name

    @property
    def spelled(self) -> str:
        return f"[{self.section}] {self.name}"

    def allowed(self) -> str:
        """What the key takes, in words: its type, its choices, whether it may be left out."""
        choices = self.item.choices()
        if choices:
            said = "one of: " + ", ".join(repr(c) for c in choices)
        elif self.element is not None:
            count = f"{self.item.meta.nargs} " if self.item.meta.nargs else ""
            said = f"a list of {count}{_WORDS[self.element].removeprefix('a ')}s"
        else:
            said = " or ".join(_WORDS[k] for k in self.kinds)
        return said + (" (leave it out for none)" if self.optional else "")


_WORDS = {bool: "true or false", int: "a whole number", float: "a number", str: "a string"}


def _kinds(annotation: Any) -> tuple[tuple[type, ...], type | None, bool]:
    """(scalar types, list item type, optional) of a field's annotation: `int`, `float | None`, `list[str] | None`."""
    args = typing.get_args(annotation) if isinstance(annotation, types.UnionType) else (annotation,)
    optional = type(None) in args
    kinds: list[type] = []
    element: type | None = None
    for arg in args:
        if arg is type(None):
            continue
        origin = typing.get_origin(arg)
        if origin in (list, tuple):
            element = typing.get_args(arg)[0]
            kinds.append(list)
        else:
            kinds.append(arg)
    return tuple(kinds), element, optional


def keys() -> dict[str, dict[str, Key]]:
    """section -> field name -> Key, in declaration order, read from RunConfig's sections."""
    table: dict[str, dict[str, Key]] = {}
    for section, cls in RunConfig.sections():
        hints = typing.get_type_hints(cls)
        table[section] = {item.name: Key(section, item, *_kinds(hints[item.name])) for item in declared(cls)}
    return table


def _key(name: str) -> Key:
    return next(named[name] for named in keys().values() if name in named)


def _near(word: str, names: Iterable[str], spelled: str = "{}") -> str:
    close = difflib.get_close_matches(word, list(names), n=1)
    return f" (did you mean {spelled.format(close[0])}?)" if close else ""


# ----- reading -------------------------------------------------------------------------------------------------


def read_run_file(path: str | Path) -> dict[str, Any]:
    """The settings a run file gives, flat by name ({"budget": 40, ...}), each of its declared type.

    A UserError (one line: the file, the key, what it takes) for a file that cannot be read, is not TOML, or names
    a section or key that is not declared, or gives a value of the wrong type. The values' own rules (a positive
    budget, a known policy) are the sections' to check: `check_values`."""
    data = load_toml(path)
    if "sweep" in data:
        raise UserError(f"{path}: [sweep] is a sweep's grid: run the file with clade sweep --config {path}")
    return settings_of(data, path)


def load_toml(path: str | Path) -> dict[str, Any]:
    """A TOML file's tables, or a UserError (one line) for a file that is missing, unreadable or not TOML."""
    import tomllib

    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise UserError(f"{path}: no such run file (write one with: clade search --print-config > {path})") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise UserError(f"{path}: not valid TOML: the file is not UTF-8 text") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read the run file: {exc.strerror or exc}") from None


def settings_of(data: Mapping[str, Any], path: str | Path) -> dict[str, Any]:
    """A run file's tables (read by `load_toml`) as settings, flat by name, each of its declared type."""
    return dict(_settings_of(data, str(path)))


def _settings_of(data: Mapping[str, Any], path: str) -> Iterator[tuple[str, Any]]:
    table = keys()
    home = {name: section for section, named in table.items() for name in named}
    for section, body in data.items():
        if section not in table:
            if section in home:  # a setting outside its table
                raise UserError(f"{path}: {section} belongs in [{home[section]}] (write it under that table)")
            raise UserError(
                f"{path}: unknown section [{section}]{_near(section, table, '[{}]')}; the sections are: "
                + ", ".join(f"[{s}]" for s in table)
            )
        if not isinstance(body, dict):
            raise UserError(f"{path}: [{section}] must be a table of settings, not a value")
        for name, value in body.items():
            if name not in table[section]:
                raise UserError(f"{path}: {_unknown_key(section, name, home)}")
            yield name, typed_value(table[section][name], value, path)


def _unknown_key(section: str, name: str, home: Mapping[str, str]) -> str:
    if name in home:
        return f"[{section}] {name}: {name} is a setting of [{home[name]}], not [{section}]"
    named = keys()[section]
    return f"[{section}] {name} is not a setting{_near(name, named)}; [{section}] takes: {', '.join(named)}"


def typed_value(key: Key, value: Any, path: str) -> Any:
    """`value` as the setting holds it (a TOML integer for a float setting is a float), or a UserError."""
    for kind in key.kinds:
        if kind is list and isinstance(value, list):
            if key.element is not None and all(_is(item, key.element) for item in value):
                if key.item.meta.nargs is None or len(value) == key.item.meta.nargs:
                    return list(value)
        elif _is(value, kind):
            return float(value) if kind is float else value
    raise UserError(f"{path}: {key.spelled} must be {key.allowed()}, not {_said(value)}")


def _is(value: Any, kind: type) -> bool:
    if kind is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def _said(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return repr(value)
    return f"a {'table' if isinstance(value, dict) else type(value).__name__}"


def check_values(path: str | Path, from_file: Mapping[str, Any], flags: Mapping[str, Any]) -> None:
    """A UserError naming the file's key whose value breaks a section's rules (a budget of 0, an unknown policy).

    The file's settings and the flags (which override them) are checked together; when the flags alone are at
    fault, nothing is said here: the command line's own check names the flag. Otherwise the first key of the
    file that breaks a rule on its own (with the flags) is named, or the file as a whole for a rule across keys."""

    def broken(chosen: Mapping[str, Any]) -> str | None:
        try:
            config_of(dict(chosen)).validate()
        except UserError as exc:
            return str(exc)
        return None

    file_only = {k: v for k, v in from_file.items() if k not in flags}
    why = broken({**file_only, **flags})
    if why is None or broken(flags) is not None:
        return
    for name, value in file_only.items():
        alone = broken({name: value, **flags})
        if alone is not None:
            raise UserError(f"{path}: {_key(name).spelled} = {_toml_value(value)}: {alone}")
    raise UserError(f"{path}: {why}")


def refuse_kept(path: str | Path, from_file: Mapping[str, Any], items: Iterable[Declared], why: str) -> None:
    """A UserError for the first of `items` (settings a resume or replay keeps) that the file gives."""
    for item in items:
        if item.name in from_file:
            raise UserError(f"{path}: {_key(item.name).spelled} {why}")


def apply_run_file(args: argparse.Namespace) -> None:
    """Join the run file of `args.config` to the command line: each of its settings counts as a flag given,
    unless that flag was given too (the flag wins). So what a resume or a replay keeps is refused in the file
    just as its flag would be; for a new run the file's values are checked here, so an error names its key."""
    path = args.config
    from_file = read_run_file(path)
    flags = given(args)
    if args.resume or args.resume_from:
        how = "--resume" if args.resume else "--resume-from"
        spare = ("run_dir",) if how == "--resume-from" else ()  # a restored run is a new folder, where --run-dir says
        kept = [item for item in settings_kept() if item.name not in spare]
        may = ", ".join([item.name for _, item in RunConfig.settings() if item not in kept])
        refuse_kept(
            path,
            from_file,
            kept,
            f"cannot be set with {how}: the run keeps its own (with {how} a run file may set only: {may})",
        )
    elif from_file.get("replay") or args.replay:
        may = ", ".join(item.name for _, item in RunConfig.settings() if item.meta.on_replay == "change")
        refuse_kept(
            path,
            from_file,
            replay_refused(),
            f"cannot be set with --replay: the replay repeats the original "
            f"(with --replay a run file may set only: {may})",
        )
    else:
        check_values(path, from_file, flags)
    for name, value in from_file.items():
        if name not in flags:
            setattr(args, name, value)


# ----- writing -------------------------------------------------------------------------------------------------


def to_toml(config: RunConfig) -> str:
    """The configuration as a run file: a table per section in declaration order, each setting under its help.

    A setting whose value is None is left out (TOML has no null; read back, it is the default, None), shown as a
    comment. `mutator` is written only where it is not what `model` implies (llm with a model, offline without),
    since the file's mutator would otherwise override that rule when a later --model is given."""
    lines = ["# A Clade run file: clade search --config FILE (flags given too override it)."]
    for section, named in keys().items():
        lines += ["", f"[{section}]"]
        for name, key in named.items():
            value = getattr(getattr(config, section), name)
            lines += [""] + ["# " + line for line in textwrap.wrap(_help(key), 100)]
            if value is None:
                lines.append(f"# {name} = (not set)")
            elif name == "mutator" and value == ("llm" if config.llm.model else "offline"):
                lines.append(f"# {name} = {_toml_value(value)} (as model implies: llm with a model, offline without)")
            else:
                lines.append(f"{name} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


def _help(key: Key) -> str:
    return f"{key.item.help_text()} (default: {key.item.default_said()}; {key.allowed()})"


def _toml_value(value: Any) -> str:
    """A value as TOML writes it, on one line (tomli-w puts each item of a list on a line of its own)."""
    import tomli_w

    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    return tomli_w.dumps({"v": value}).split("=", 1)[1].strip()
