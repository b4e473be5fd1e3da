"""Seed agent for circle packing: 26 circles in the unit square, the sum of their radii as large as possible.

`construct()` returns (centers, radii): an array of 26 (x, y) centres and one
of 26 radii. The layout inside the EVOLVE-BLOCK is a simple one: rows of
circles, staggered. `max_radii` (fixed) then gives each circle the largest
radius the walls and its neighbours allow for those centres, so any layout
gives a valid packing and a search can concentrate on where circles go.
"""
import numpy as np


def max_radii(centers):
    """Centres clipped into the square, and radii as large as the walls and the other circles allow."""
    c = np.clip(np.asarray(centers, dtype=float), 0.0, 1.0)
    wall = np.min(np.concatenate([c, 1.0 - c], axis=1), axis=1)
    gaps = np.sqrt(((c[:, None, :] - c[None, :, :]) ** 2).sum(axis=2))
    np.fill_diagonal(gaps, np.inf)
    r = wall.copy()
    ratio = (r[:, None] + r[None, :]) / np.maximum(gaps, 1e-12)
    r = r / np.maximum(ratio.max(axis=1), 1.0)  # shrink every overlapping pair apart
    for _ in range(3):  # then grow each circle into the room left around it
        for i in range(len(r)):
            r[i] = max(0.0, min(wall[i], float(np.min(gaps[i] - r))))
    return c, r


def construct():
    """Return (centers, radii) for 26 circles in the unit square."""
    # EVOLVE-BLOCK-START
    rows = 5
    per_row = 5.2
    stagger = 0.5
    k = np.arange(26)
    row = np.minimum(k // 5, rows - 1)
    col = k - 5 * row
    x = (col + 0.5 + stagger * (row % 2)) / per_row
    y = (row + 0.5) / rows
    # EVOLVE-BLOCK-END
    return max_radii(np.stack([x, y], axis=1))
