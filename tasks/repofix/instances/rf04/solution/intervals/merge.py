def merge_intervals(intervals):
    """Merge overlapping or touching [start, end] intervals; returns a sorted list of lists."""
    merged = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def total_length(intervals):
    """Length covered by the union of the intervals."""
    return sum(end - start for start, end in merge_intervals(intervals))
