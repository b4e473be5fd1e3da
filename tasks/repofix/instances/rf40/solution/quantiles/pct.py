def percentile(values, p):
    """The p-th percentile (0-100) with linear interpolation between closest ranks."""
    if not values:
        raise ValueError("no values")
    if not 0 <= p <= 100:
        raise ValueError("p must be in 0..100")
    s = sorted(values)
    rank = p / 100 * (len(s) - 1)
    lo = int(rank)
    hi = min(lo + 1, len(s) - 1)
    lo = min(lo, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (rank - int(rank))
