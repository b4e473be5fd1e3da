def histogram(values, bins):
    """Counts of values in `bins` equal-width bins spanning min..max (the max goes in the last bin)."""
    if bins < 1:
        raise ValueError("need at least one bin")
    if not values:
        return [0] * bins
    lo, hi = min(values), max(values)
    width = (hi - lo) / bins or 1
    counts = [0] * bins
    for v in values:
        index = int((v - lo) / width)
        counts[index] += 1
    return counts
