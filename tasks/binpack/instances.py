"""Bin-packing instances: FunSearch's two families, generated from a seed, or loaded from JSON.

Romera-Paredes et al. (Nature 2024) evaluate on OR-Library style instances
(uniform integer sizes in [20, 100], capacity 150) and Weibull(3, 45) sizes
rounded and clipped to [1, 100], capacity 100. Sizes here keep one
evaluation well under a second: 500 OR items, 1,000 Weibull items.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tasks.base import Instance

OR_ITEMS = 500
WEIBULL_ITEMS = 1000


def or_instance(rng: np.random.Generator, n_items: int = OR_ITEMS) -> dict:
    return {"capacity": 150.0, "items": rng.integers(20, 101, size=n_items).astype(float).tolist()}


def weibull_instance(rng: np.random.Generator, n_items: int = WEIBULL_ITEMS) -> dict:
    sizes = np.clip(np.round(rng.weibull(3.0, size=n_items) * 45.0), 1, 100)
    return {"capacity": 100.0, "items": sizes.astype(float).tolist()}


def generate(seed: int, per_family: dict[str, int]) -> list[Instance]:
    """`per_family` maps split -> instances per family; ids say family, split and index."""
    rng = np.random.default_rng(seed)
    out: list[Instance] = []
    for split, count in per_family.items():
        for i in range(count):
            out.append(Instance(f"or{OR_ITEMS}_{split}_{i:02d}", split, or_instance(rng)))
            out.append(Instance(f"weibull{WEIBULL_ITEMS}_{split}_{i:02d}", split, weibull_instance(rng)))
    return out


class InstanceFileError(ValueError):
    """An instances file the user gave is unreadable or malformed."""


def load(path: str | Path) -> list[Instance]:
    """JSON of name -> {capacity, items[, split]}; the name is the instance id.

    Without a `split`, instances alternate dev, holdout, dev, ... in file order
    (a file of one instance is dev only)."""
    try:
        raw = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise InstanceFileError(f"cannot read instances from {path}: {exc}") from None
    if not isinstance(raw, dict) or not raw:
        raise InstanceFileError(f"{path}: expected a JSON object of name -> {{capacity, items}}")
    out = []
    for k, (name, entry) in enumerate(raw.items()):
        try:
            capacity = float(entry["capacity"])
            items = [float(x) for x in entry["items"]]
        except (KeyError, TypeError, ValueError):
            raise InstanceFileError(f"{path}: instance {name!r} needs a numeric capacity and a list of items") from None
        if capacity <= 0 or not items or any(x <= 0 or x > capacity for x in items):
            raise InstanceFileError(f"{path}: instance {name!r} has items outside (0, capacity]")
        split = entry.get("split", "dev" if k % 2 == 0 else "holdout")
        if split not in ("dev", "holdout"):
            raise InstanceFileError(f"{path}: instance {name!r} has split {split!r}; use dev or holdout")
        out.append(Instance(str(name), split, {"capacity": capacity, "items": items}))
    return out
