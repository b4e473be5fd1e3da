"""Online bin packing, the way FunSearch scores a priority function.

Romera-Paredes et al., "Mathematical discoveries from program search with
large language models", Nature 2024: items arrive in order; every item goes
into the feasible bin with the highest priority. There is one bin per item,
all starting at full capacity, so an unopened bin is always feasible; ties go
to the lowest index (``np.argmax``), which makes a constant priority first fit.

This module is plain numpy with no engine imports: the sandbox runner copies
the same logic, and trusted code (the evaluator, tests, benchmarks) uses it
directly.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

PriorityFn = Callable[[float, np.ndarray], np.ndarray]


def pack_online(priority: PriorityFn, capacity: float, items: np.ndarray | list[float]) -> np.ndarray:
    """Return the bin index chosen for each item, in order."""
    sizes = np.asarray(items, dtype=float)
    remaining = np.full(len(sizes), float(capacity))
    chosen = np.empty(len(sizes), dtype=np.int64)
    for i, item in enumerate(sizes):
        feasible = np.flatnonzero(remaining - item >= 0)
        scores = np.asarray(priority(float(item), remaining[feasible]), dtype=float)
        if scores.shape != feasible.shape:
            raise ValueError(f"priority returned shape {scores.shape} for {len(feasible)} bins")
        best = int(feasible[int(np.argmax(scores))])
        remaining[best] -= item
        chosen[i] = best
    return chosen


def lower_bound(capacity: float, items: np.ndarray | list[float]) -> int:
    """L1 = ceil(sum of sizes / capacity): no packing uses fewer bins."""
    return int(math.ceil(float(np.sum(items)) / float(capacity) - 1e-9))


def first_fit(item: float, bins: np.ndarray) -> np.ndarray:
    return np.zeros_like(bins)


def best_fit(item: float, bins: np.ndarray) -> np.ndarray:
    return -(bins - item)
