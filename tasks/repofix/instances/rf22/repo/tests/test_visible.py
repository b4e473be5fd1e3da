import unittest

from bsearch import find_index


class TestSearch(unittest.TestCase):
    def test_middle(self):
        self.assertEqual(find_index([1, 3, 5, 7, 9], 5), 2)

    def test_absent(self):
        self.assertEqual(find_index([1, 3, 5], 4), -1)

    def test_last(self):
        self.assertEqual(find_index([1, 3, 5, 7, 9], 9), 4)
