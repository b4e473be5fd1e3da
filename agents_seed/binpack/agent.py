"""Seed agent for online bin packing: first fit.

Every feasible bin gets the same priority, so the runner's tie rule (lowest
index wins) puts each item into the first bin it fits in.
"""
import numpy as np


def priority(item: float, bins: np.ndarray) -> np.ndarray:
    """Return a priority per feasible bin; `bins` holds their remaining capacities."""
    return np.zeros_like(bins)
