"""Checking a circle packing: plain numpy, no engine imports.

A packing of n circles in the unit square is valid when every circle lies in
the square and no two circles overlap, both up to an absolute tolerance
`TOL` = 1e-9: x - r >= -TOL, x + r <= 1 + TOL (same for y), and for every
pair, distance between centres >= r_i + r_j - TOL. Radii must be finite and
non-negative (a radius of 0 is allowed: it adds nothing to the sum).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

TOL = 1e-9


@dataclass(frozen=True)
class Verdict:
    valid: bool
    reason: str = ""
    sum_radii: float = 0.0


def _numbers(value, shape: tuple[int, ...], what: str) -> np.ndarray | str:
    """`value` as a float array of `shape`, or a one-line reason it is not one."""

    def flat(v):
        if isinstance(v, (list, tuple)):
            for x in v:
                yield from flat(x)
        else:
            yield v

    items = list(flat(value)) if isinstance(value, (list, tuple)) else None
    if items is None or any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in items):
        return f"{what} must be a list of numbers"
    array = np.asarray(value, dtype=float) if items else np.zeros(0)
    if array.shape != shape:
        return f"{what} must have shape {shape}, not {array.shape}"
    if not np.all(np.isfinite(array)):
        return f"{what} holds a value that is not finite"
    return array


def check_packing(centers, radii, n: int, tol: float = TOL) -> Verdict:
    """Is this a valid packing of exactly `n` circles in the unit square? With its sum of radii."""
    c = _numbers(centers, (n, 2), f"centers ({n} pairs of x, y)")
    if isinstance(c, str):
        return Verdict(False, c)
    r = _numbers(radii, (n,), f"radii ({n} numbers)")
    if isinstance(r, str):
        return Verdict(False, r)
    if np.any(r < 0):
        i = int(np.argmin(r))
        return Verdict(False, f"circle {i} has a negative radius {r[i]:.6g}")
    low = c - r[:, None]
    high = c + r[:, None]
    outside = np.maximum(-low, high - 1.0).max(axis=1)
    if np.any(outside > tol):
        i = int(np.argmax(outside))
        return Verdict(
            False,
            f"circle {i} (centre {c[i, 0]:.6g}, {c[i, 1]:.6g}, radius {r[i]:.6g}) "
            f"leaves the unit square by {outside[i]:.3g}",
        )
    if n > 1:
        first, second = np.triu_indices(n, 1)  # every pair once
        dist = np.hypot(c[first, 0] - c[second, 0], c[first, 1] - c[second, 1])
        overlap = r[first] + r[second] - dist
        k = int(np.argmax(overlap))
        if overlap[k] > tol:
            return Verdict(False, f"circles {int(first[k])} and {int(second[k])} overlap by {overlap[k]:.3g}")
    return Verdict(True, "", float(math.fsum(r.tolist())))
