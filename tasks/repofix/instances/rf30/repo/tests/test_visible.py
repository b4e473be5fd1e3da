import unittest

from seqtools import duplicates, unique


class TestUnique(unittest.TestCase):
    def test_sorted_input(self):
        self.assertEqual(unique([1, 1, 2, 3, 3]), [1, 2, 3])

    def test_duplicates(self):
        self.assertEqual(duplicates([1, 2, 1, 3, 2, 1]), [1, 2])
