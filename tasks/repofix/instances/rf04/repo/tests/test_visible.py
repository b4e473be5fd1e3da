import unittest

from intervals import merge_intervals, total_length


class TestMerge(unittest.TestCase):
    def test_overlap(self):
        self.assertEqual(merge_intervals([[1, 4], [2, 6], [8, 9]]), [[1, 6], [8, 9]])

    def test_empty(self):
        self.assertEqual(merge_intervals([]), [])

    def test_touching(self):
        self.assertEqual(merge_intervals([[1, 3], [3, 5]]), [[1, 5]])
