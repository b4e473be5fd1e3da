import unittest

from quantiles import percentile


class TestPercentile(unittest.TestCase):
    def test_min(self):
        self.assertEqual(percentile([3, 1, 2], 0), 1)

    def test_errors(self):
        with self.assertRaises(ValueError):
            percentile([], 50)

    def test_median(self):
        self.assertEqual(percentile([1, 2, 3, 4, 5], 50), 3)
