import unittest

from rle import decode, encode


class TestRLE(unittest.TestCase):
    def test_decode(self):
        self.assertEqual(decode([("a", 2), ("b", 1)]), "aab")

    def test_empty(self):
        self.assertEqual(encode(""), [])
