"""Reference agent for circle packing: a 5 x 5 grid of radius 0.1, and a 26th circle in a gap.

The grid alone sums to 2.5; the gap between four grid circles holds a circle
of radius 0.1 (sqrt 2 - 1), so the total is about 2.541. Kept beside the seed
as a bar a search should pass.
"""
import numpy as np


def construct():
    """Return (centers, radii) for 26 circles in the unit square."""
    k = np.arange(25)
    centers = np.stack([0.1 + 0.2 * (k % 5), 0.1 + 0.2 * (k // 5)], axis=1)
    radii = np.full(25, 0.1)
    gap = 0.1 * (np.sqrt(2.0) - 1.0)
    centers = np.vstack([centers, [[0.2, 0.2]]])
    radii = np.append(radii, gap)
    return centers, radii
