import unittest

from ranking import leaderboard


class TestBoard(unittest.TestCase):
    def test_order(self):
        self.assertEqual(leaderboard({"a": 1, "b": 3, "c": 2}), ["b", "c", "a"])

    def test_top(self):
        self.assertEqual(leaderboard({"a": 1, "b": 3}, top=1), ["b"])
