import unittest

from merging import deep_merge


class TestMerge(unittest.TestCase):
    def test_flat(self):
        self.assertEqual(deep_merge({"a": 1, "b": 2}, {"b": 3}), {"a": 1, "b": 3})

    def test_not_mutated(self):
        base = {"a": {"x": 1}}
        deep_merge(base, {"b": 2})
        self.assertEqual(base, {"a": {"x": 1}})
