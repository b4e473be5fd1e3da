import unittest

from kvconf import parse_config


class TestParse(unittest.TestCase):
    def test_basic(self):
        self.assertEqual(parse_config("a = 1\n# c\n\nb=two"), {"a": "1", "b": "two"})

    def test_error(self):
        with self.assertRaises(ValueError):
            parse_config("novalue")
