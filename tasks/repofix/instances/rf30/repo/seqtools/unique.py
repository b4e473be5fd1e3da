def unique(items):
    """The items without repeats, in the order they first appear."""
    return list(set(items))


def duplicates(items):
    """Items that appear more than once, in order of their second appearance."""
    seen, out = set(), []
    for item in items:
        if item in seen and item not in out:
            out.append(item)
        seen.add(item)
    return out
