import unittest

from cart import Basket


class TestBasket(unittest.TestCase):
    def test_total(self):
        b = Basket()
        b.add("tea", 2.5, 2)
        b.add("milk", 1.0, 1)
        self.assertEqual(b.total(), 6.0)
        self.assertEqual(b.total(discount_percent=50), 3.0)

    def test_negative(self):
        with self.assertRaises(ValueError):
            Basket().add("x", -1, 1)
