import unittest

from ordinals import ordinal


class TestOrdinal(unittest.TestCase):
    def test_small(self):
        self.assertEqual([ordinal(i) for i in (1, 2, 3, 4)], ["1st", "2nd", "3rd", "4th"])

    def test_twenties(self):
        self.assertEqual(ordinal(22), "22nd")
