import unittest

from graphs import shortest_path

G = {"a": ["b", "c"], "b": ["d"], "c": ["d"], "d": ["e"]}


class TestPaths(unittest.TestCase):
    def test_path(self):
        self.assertEqual(shortest_path(G, "a", "e"), ["a", "b", "d", "e"])

    def test_unreachable(self):
        self.assertIsNone(shortest_path(G, "e", "a"))
