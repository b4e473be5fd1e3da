def flatten(items):
    """Flatten nested lists/tuples into one list; strings are single items."""
    out = []
    for item in items:
        if isinstance(item, (list, tuple)):
            out.extend(flatten(item))
        else:
            out.append(item)
    return out


def depth(items):
    if not isinstance(items, (list, tuple)):
        return 0
    return 1 + max((depth(i) for i in items), default=0)
