import unittest

from durations import format_duration


class TestFormat(unittest.TestCase):
    def test_seconds(self):
        self.assertEqual(format_duration(0), "0m 00s")

    def test_negative(self):
        with self.assertRaises(ValueError):
            format_duration(-1)

    def test_minutes(self):
        self.assertEqual(format_duration(125), "2m 05s")
