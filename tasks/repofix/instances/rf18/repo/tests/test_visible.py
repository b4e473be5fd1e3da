import unittest

from wrap import wrap


class TestWrap(unittest.TestCase):
    def test_wrap(self):
        self.assertEqual(wrap("aa bb cc", 6), ["aa bb", "cc"])

    def test_long_word(self):
        self.assertEqual(wrap("abcdefgh ij", 4), ["abcdefgh", "ij"])
