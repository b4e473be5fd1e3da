"""Thompson sampling's argmax over Beta posteriors."""
from __future__ import annotations

import numpy as np


def thompson_argmax(alpha: np.ndarray, beta: np.ndarray, rng: np.random.Generator) -> tuple[int, float]:
    """Draw theta_i ~ Beta(alpha_i, beta_i) for every candidate; return (argmax index, its draw).

    One vectorized draw per candidate (DESIGN.md: about 5 ms at 100k on 2 cores).
    """
    if len(alpha) == 0:
        raise ValueError("no candidates to sample")
    theta = rng.beta(alpha, beta)
    best = int(np.argmax(theta))
    return best, float(theta[best])
