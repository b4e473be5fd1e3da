import unittest

from stock import Inventory


class TestInventory(unittest.TestCase):
    def test_add_count(self):
        inv = Inventory()
        inv.add("Apple", 3)
        self.assertEqual(inv.count("apple"), 3)

    def test_remove_lower(self):
        inv = Inventory()
        inv.add("pear", 2)
        inv.remove("pear")
        self.assertEqual(inv.count("pear"), 1)
