import unittest

from nested import depth, flatten


class TestFlat(unittest.TestCase):
    def test_numbers(self):
        self.assertEqual(flatten([1, [2, [3, (4,)]]]), [1, 2, 3, 4])

    def test_depth(self):
        self.assertEqual(depth([1, [2, [3]]]), 3)

    def test_strings(self):
        self.assertEqual(flatten(["ab", ["c"]]), ["ab", "c"])
