import unittest

from numstats import mean, median


class TestStats(unittest.TestCase):
    def test_mean_whole(self):
        self.assertEqual(mean([2, 4, 6]), 4)

    def test_median(self):
        self.assertEqual(median([3, 1, 2, 10]), 2.5)

    def test_mean_fraction(self):
        self.assertEqual(mean([1, 2]), 1.5)
