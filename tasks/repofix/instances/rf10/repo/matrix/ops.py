def transpose(m):
    """Rows become columns: a list of lists with len(m[0]) rows."""
    if not m:
        return []
    return [[m[i][j] for i in range(len(m))] for j in range(len(m))]


def add(a, b):
    if len(a) != len(b) or any(len(r) != len(s) for r, s in zip(a, b)):
        raise ValueError("shapes differ")
    return [[x + y for x, y in zip(r, s)] for r, s in zip(a, b)]
