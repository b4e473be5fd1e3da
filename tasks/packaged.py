"""Benchmarks whose data comes from an installed package (the `tasks` extra), and instance subsets of them.

The data is never copied into the repository: it is read at run time from
the package's own files, found without importing the package. A missing
package is one line naming the extra to install.

A subset file (`--instances FILE`) picks which problems a run uses, per split:

    {"dev": ["HumanEval/0", "HumanEval/2"], "holdout": 4}

a list names the instances (of that split's pool), a number takes the first N
of the split in the task's order, "all" (or leaving the split out of a file
that names the other) keeps its default. Ids the split does not hold are an
error, so a typo cannot silently shrink a run.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from engine.errors import UserError

Wanted = list[str] | int | str  # a split's ids in a subset file: a list of ids, a number, or "all"


def package_dir(module: str, distribution: str, task: str) -> Path:
    """The installed package's directory; UserError naming the extra when it is not installed."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        from engine.install import install_extra

        raise UserError(f"the {task} task needs the {distribution} package (its data): {install_extra('tasks')}")
    return Path(locations[0])


def read_subset(path: str | None, task: str) -> dict[str, Wanted]:
    """{split: list of ids | int | 'all'} from a subset file; {} without one."""
    if not path:
        return {}
    try:
        data = json.loads(Path(path).read_text())
    except OSError as exc:
        raise UserError(f"--instances {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UserError(f"--instances {path} is not JSON ({exc})") from None
    if not isinstance(data, dict) or not data or set(data) - {"dev", "holdout"}:
        raise UserError(
            f'--instances {path}: for {task}, a JSON object with "dev" and/or "holdout", each a '
            'list of ids, a number, or "all"'
        )
    for split, value in data.items():
        ok = (
            value == "all"
            or (isinstance(value, int) and not isinstance(value, bool) and value >= 0)
            or (isinstance(value, list) and all(isinstance(v, str) for v in value))
        )
        if not ok:
            raise UserError(f'--instances {path}: {split} must be a list of ids, a number or "all", not {value!r}')
    return data


def choose(
    pools: Mapping[str, Sequence[str]], defaults: Mapping[str, int | None], subset: Mapping[str, Wanted], task: str
) -> dict[str, list[str]]:
    """The ids each split uses: `pools` in the task's order, `defaults` the first N (None: all)."""
    chosen: dict[str, list[str]] = {}
    for split, pool in pools.items():
        want = subset.get(split, "all")
        if want == "all":
            n = defaults.get(split)
            chosen[split] = list(pool if n is None else pool[:n])
        elif isinstance(want, int):
            chosen[split] = list(pool[:want])
        else:
            known = set(pool)
            missing = [i for i in want if i not in known]
            if missing:
                raise UserError(
                    f"--instances: {task} {split} has no instance {missing[0]!r}"
                    + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
                )
            chosen[split] = list(dict.fromkeys(want))
    if not chosen.get("dev"):
        raise UserError(f"--instances: the {task} run needs at least one dev instance")
    return chosen
