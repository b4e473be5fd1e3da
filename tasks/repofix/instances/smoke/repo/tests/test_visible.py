import unittest

from calc import multiply


class TestOps(unittest.TestCase):
    def test_multiply(self):
        self.assertEqual(multiply(3, 4), 12)
