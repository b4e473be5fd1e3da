import unittest

from csvline import split_line


class TestSplit(unittest.TestCase):
    def test_plain(self):
        self.assertEqual(split_line("a,b,,c"), ["a", "b", "", "c"])

    def test_quoted_sep(self):
        self.assertEqual(split_line('"x,y",z'), ["x,y", "z"])
