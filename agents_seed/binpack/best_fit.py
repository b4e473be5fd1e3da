"""Reference agent for online bin packing: best fit.

The bin left with the least room after the item goes in gets the highest
priority. Kept beside the seed as the bar a search should reach.
"""
import numpy as np


def priority(item: float, bins: np.ndarray) -> np.ndarray:
    """Return a priority per feasible bin; `bins` holds their remaining capacities."""
    return -(bins - item)
