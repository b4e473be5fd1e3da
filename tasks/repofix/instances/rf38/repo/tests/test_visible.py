import unittest

from envflags import parse_bool


class TestFlags(unittest.TestCase):
    def test_values(self):
        self.assertTrue(parse_bool("YES"))
        self.assertFalse(parse_bool("off"))

    def test_bad(self):
        with self.assertRaises(ValueError):
            parse_bool("maybe")

    def test_spaces(self):
        self.assertTrue(parse_bool(" true\n"))
