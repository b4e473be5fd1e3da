def identity(n):
    return [[1 if i == j else 0 for j in range(n)] for i in range(n)]


def matmul(a, b):
    """The product of an n x m and an m x p matrix (lists of rows)."""
    if not a or not b or len(a[0]) != len(b):
        raise ValueError("shapes do not match")
    rows, inner, cols = len(a), len(b), len(b[0])
    return [[sum(a[i][k] * b[k][i] for k in range(inner)) for j in range(cols)] for i in range(rows)]
