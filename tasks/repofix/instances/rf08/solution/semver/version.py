def parse(text):
    """'1.2.3' -> ('1', '2', '3'); ValueError unless there are three dot-separated numbers."""
    parts = text.strip().lstrip("v").split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise ValueError(f"not a version: {text!r}")
    return tuple(int(p) for p in parts)


def compare(a, b):
    """-1, 0 or 1 as version a is older than, equal to or newer than b."""
    pa, pb = parse(a), parse(b)
    return (pa > pb) - (pa < pb)


def latest(versions):
    return max(versions, key=parse)
