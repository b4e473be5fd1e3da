import unittest

from running import Accumulator


class TestAccumulator(unittest.TestCase):
    def test_mean(self):
        acc = Accumulator()
        for x in (1, 2, 3, 6):
            acc.add(x)
        self.assertEqual(acc.mean, 3.0)

    def test_single(self):
        self.assertEqual(Accumulator().add(5).variance(), 0.0)
