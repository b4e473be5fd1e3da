"""A quadrature rule: the integral of f over [a, b] from at most four evaluations of f."""


# EVOLVE-BLOCK-START
def integrate(f, a, b):
    """The trapezoid rule on four equally spaced points."""
    nodes = [0.0, 0.333333, 0.666667, 1.0]  # where f is evaluated, as fractions of [a, b]
    weights = [0.166667, 0.333333, 0.333333, 0.166667]
    width = b - a
    return width * sum(w * f(a + t * width) for t, w in zip(nodes, weights))


# EVOLVE-BLOCK-END
