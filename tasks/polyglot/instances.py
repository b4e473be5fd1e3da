"""Which Polyglot exercises a run uses: `--instances` as a list of languages and exercises, or a subset file.

    --instances python,go                          every Python and Go exercise, in their splits
    --instances python/affine-cipher,rust/acronym  these two, each in its own split
    --instances subset.json                        {"dev": ["python", "go/beer-song"], "holdout": 10}

In a subset file (tasks/packaged.py's format) a list may name languages as well as exercises, and a number
takes the first N of the split in the task's order (by language, then name).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from engine.errors import UserError
from tasks.packaged import choose, read_subset
from tasks.polyglot.exercises import LANGUAGES, Exercise


def _expand(names: list[str], pool: list[str], what: str) -> list[str]:
    """Exercise ids for a list of languages and ids, in the pool's order for languages; UserError for a name
    that is neither."""
    ids: list[str] = []
    for name in names:
        if name in LANGUAGES:
            ids += [i for i in pool if i.startswith(name + "/")]
        elif "/" in name and name.split("/", 1)[0] in LANGUAGES:
            ids.append(name)
        else:
            raise UserError(
                f"--instances {what}: {name!r} is neither a language ({', '.join(LANGUAGES)}) nor an exercise "
                "such as python/affine-cipher"
            )
    return list(dict.fromkeys(ids))


def select(exercises: Mapping[str, Exercise], splits: Mapping[str, str], instances: str | None) -> list[str]:
    """The ids a run uses, dev first then holdout, each in the task's order."""
    pools = {split: [i for i in exercises if splits[i] == split] for split in ("dev", "holdout")}
    if not instances:
        return pools["dev"] + pools["holdout"]
    if os.path.isfile(instances):
        subset = {
            split: _expand(wanted, pools[split], instances) if isinstance(wanted, list) else wanted
            for split, wanted in read_subset(instances, "polyglot").items()
        }
        chosen = choose(pools, {}, subset, "polyglot")
        return chosen.get("dev", []) + chosen.get("holdout", [])
    names = [n.strip() for n in instances.split(",") if n.strip()]
    ids = _expand(names, list(exercises), repr(instances))
    unknown = [i for i in ids if i not in exercises]
    if unknown:
        raise UserError(f"--instances: Polyglot has no exercise {unknown[0]!r}")
    dev = [i for i in ids if splits[i] == "dev"]
    if not dev:
        raise UserError(f"--instances {instances}: the polyglot run needs at least one dev exercise")
    return dev + [i for i in ids if splits[i] == "holdout"]


def named(instances: str | None) -> set[str]:
    """The exercises `--instances` names one by one (not through a language or a count)."""
    if not instances:
        return set()
    if os.path.isfile(instances):
        lists = [v for v in read_subset(instances, "polyglot").values() if isinstance(v, list)]
        return {n for names in lists for n in names if "/" in n}
    return {n.strip() for n in instances.split(",") if "/" in n}
