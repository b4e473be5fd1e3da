class Accumulator:
    """Running count, mean and sample variance (Welford's method)."""

    def __init__(self):
        self.n = 0
        self.mean = 0.0
        self._m2 = 0.0

    def add(self, x):
        self.n += 1
        delta = x - self.mean
        self.mean += delta / self.n
        self._m2 += delta * (x - self.mean)
        return self

    def variance(self):
        """Sample variance (divides by n - 1); 0.0 with fewer than two values."""
        if self.n < 2:
            return 0.0
        return self._m2 / self.n
