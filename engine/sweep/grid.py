"""A sweep's grid: its axes (declared settings, each with the values to try) and its seeds, and the cells
they make (every combination of one value per axis, times every seed).

    --grid policy=hgm,dgm,openevolve --grid budget=60,120 --seeds 5      # 2 axes, 6 groups, 30 cells

An axis is any setting RunConfig declares, named as its field (`eval_timeout`) or its flag (`eval-timeout`,
`--eval-timeout`): nothing here lists one, so a new setting is sweepable with no code of its own. A value is
read as its flag reads it (the setting's own conversion) on the command line, and as its run-file key takes it
in a run file's `[sweep.grid]` table; every cell's configuration is checked before anything runs, so a bad
value is one line naming the axis and the value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.config.run_config import RunConfig
from engine.config.settings import Declared
from engine.errors import UserError
from engine.words import did_you_mean

# settings a sweep sets itself or that do not make a cell of their own
NOT_AN_AXIS = {
    "seed": "seeds are the sweep's own axis: give --seeds N (or a list, --seeds 0,3,7)",
    "run_dir": "a sweep puts each cell's run in its own folder under the sweep's (--sweep-dir)",
    "max_cost": "--max-cost caps the whole sweep's spend; each cell gets a share of it",
}


@dataclass(frozen=True)
class Axis:
    """One declared setting and the values a sweep tries, in the order given."""

    name: str
    values: tuple[Any, ...]


@dataclass(frozen=True)
class Cell:
    """One search of a sweep: a value per axis and a seed. `group` names its values without the seed (the
    cells that differ only in seed form a group, the unit the statistics compare); `name` is its folder's."""

    name: str
    group: str
    settings: Mapping[str, Any]  # axis -> value, then "seed"

    @property
    def seed(self) -> int:
        return int(self.settings["seed"])


def setting_named(name: str) -> Declared:
    """The declared setting an axis names (field or flag spelling), or a UserError with the closest name."""
    field = name.removeprefix("--").replace("-", "_")
    known = {item.name: item for _, item in RunConfig.settings()}
    if field in known and field not in NOT_AN_AXIS:
        return known[field]
    if field in NOT_AN_AXIS:
        raise UserError(f"{name} cannot be a grid axis: {NOT_AN_AXIS[field]}")
    raise UserError(
        f"{name!r} is not a setting{did_you_mean(field, list(known))}; an axis is a setting clade search declares"
    )


def parse_grid_flag(text: str) -> Axis:
    """`policy=hgm,dgm` (a --grid flag) as an Axis, each value converted as the setting's flag converts it."""
    name, sep, listed = text.partition("=")
    if not sep or not name.strip() or not listed.strip():
        raise UserError(f"--grid takes SETTING=V1,V2,... (for example policy=hgm,dgm), not {text!r}")
    item = setting_named(name.strip())
    values = tuple(_from_text(item, value.strip()) for value in listed.split(","))
    return _distinct(Axis(item.name, values))


def grid_from_table(table: Mapping[str, Any], path: str) -> list[Axis]:
    """A run file's `[sweep.grid]` table (setting = [values]) as axes, each value typed as its key takes it."""
    from engine.config.run_file import keys, typed_value

    declared = {name: key for named in keys().values() for name, key in named.items()}
    axes = []
    for name, values in table.items():
        item = setting_named(name)
        if not isinstance(values, list) or not values:
            raise UserError(f"{path}: [sweep.grid] {name} must be a list of values to try, for example [1, 2]")
        axes.append(_distinct(Axis(item.name, tuple(typed_value(declared[item.name], v, path) for v in values))))
    return axes


def _from_text(item: Declared, text: str) -> Any:
    """A value as the setting's flag reads it: its own conversion, a switch's true/false, else the text."""
    import argparse

    if item.meta.switch:
        if text.lower() in ("true", "on", "yes", "1"):
            return True
        if text.lower() in ("false", "off", "no", "0"):
            return False
        raise UserError(f"--grid {item.name}: a switch takes true or false, not {text!r}")
    if item.meta.nargs or item.meta.repeat:
        raise UserError(f"--grid {item.name}: a setting of several values is swept from a run file's [sweep.grid]")
    if text.lower() == "none" and item.default is None:
        return None  # the setting left off, as a cell of its own
    if item.meta.type is None:
        return text
    try:
        return item.meta.type(text)
    except (ValueError, argparse.ArgumentTypeError) as exc:
        raise UserError(f"--grid {item.name}: {text!r} is not a value of {item.flag} ({exc})") from None


def _distinct(axis: Axis) -> Axis:
    if len(set(map(repr, axis.values))) != len(axis.values):
        raise UserError(f"--grid {axis.name}: a value is given twice ({', '.join(map(_said, axis.values))})")
    return axis


def parse_seeds(text: str, first: int = 0) -> tuple[int, ...]:
    """`--seeds 5`: five seeds from `first` (the run's --seed); `--seeds 0,3,7`: those."""
    try:
        if "," in text:
            seeds = tuple(int(s) for s in text.split(","))
        else:
            count = int(text)
            if count < 1:
                raise UserError(f"--seeds must be 1 or more, not {count}")
            seeds = tuple(range(first, first + count))
    except ValueError:
        raise UserError(f"--seeds takes a count (5) or a list of seeds (0,3,7), not {text!r}") from None
    if len(set(seeds)) != len(seeds):
        raise UserError(f"--seeds: a seed is given twice ({text})")
    return seeds


def cells_of(axes: Sequence[Axis], seeds: Sequence[int]) -> list[Cell]:
    """Every combination, groups in the order of the axes' values, seeds inside each group."""
    import itertools

    cells = []
    for values in itertools.product(*(axis.values for axis in axes)):
        chosen = dict(zip((axis.name for axis in axes), values, strict=True))
        group = group_label(chosen)
        for seed in seeds:
            name = "_".join([*(f"{axis}-{_slug(v)}" for axis, v in chosen.items()), f"s{seed}"])
            cells.append(Cell(name, group, {**chosen, "seed": seed}))
    return cells


def group_label(chosen: Mapping[str, Any]) -> str:
    """How tables and sentences name a group: the value alone on a one-axis grid (`hgm`), else axis=value
    pairs (`policy=hgm budget=60`); `all` for a sweep of seeds only."""
    if not chosen:
        return "all"
    if len(chosen) == 1:
        return _said(next(iter(chosen.values())))
    return " ".join(f"{axis}={_said(value)}" for axis, value in chosen.items())


def _said(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _slug(value: Any) -> str:
    """A value as a folder name may hold it: `openai/gpt-5-mini` -> `openai-gpt-5-mini`."""
    return re.sub(r"[^A-Za-z0-9.+]+", "-", _said(value)).strip("-") or "x"
