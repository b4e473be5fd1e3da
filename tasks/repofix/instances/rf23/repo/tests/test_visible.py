import unittest

from units import convert


class TestConvert(unittest.TestCase):
    def test_km(self):
        self.assertAlmostEqual(convert(2, "km", "m"), 2000)

    def test_unknown(self):
        with self.assertRaises(ValueError):
            convert(1, "m", "parsec")
