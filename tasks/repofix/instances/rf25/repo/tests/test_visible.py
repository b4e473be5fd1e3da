import unittest

from rpn import evaluate


class TestRPN(unittest.TestCase):
    def test_add_mul(self):
        self.assertEqual(evaluate("3 4 + 2 *"), 14)

    def test_errors(self):
        with self.assertRaises(ValueError):
            evaluate("1 +")
