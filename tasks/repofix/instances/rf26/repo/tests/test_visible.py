import unittest

from histo import histogram


class TestHistogram(unittest.TestCase):
    def test_empty(self):
        self.assertEqual(histogram([], 3), [0, 0, 0])

    def test_bad_bins(self):
        with self.assertRaises(ValueError):
            histogram([1], 0)
