import unittest

from semver import compare, parse


class TestVersion(unittest.TestCase):
    def test_compare(self):
        self.assertEqual(compare("1.2.3", "1.2.4"), -1)
        self.assertEqual(compare("2.0.0", "2.0.0"), 0)

    def test_bad(self):
        with self.assertRaises(ValueError):
            parse("1.2")

    def test_two_digits(self):
        self.assertEqual(compare("1.10.0", "1.9.0"), 1)
