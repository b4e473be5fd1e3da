import unittest

from textstats import count_words, most_common


class TestCounts(unittest.TestCase):
    def test_simple(self):
        self.assertEqual(count_words("a b a"), {"a": 2, "b": 1})

    def test_punctuation(self):
        self.assertEqual(count_words("hi, hi!"), {"hi": 2})

    def test_most_common(self):
        self.assertEqual(most_common("x y y z z z", 2), ["z", "y"])
