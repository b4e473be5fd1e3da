import unittest

from linalg import identity, matmul


class TestMul(unittest.TestCase):
    def test_identity(self):
        self.assertEqual(matmul(identity(2), identity(2)), identity(2))

    def test_mismatch(self):
        with self.assertRaises(ValueError):
            matmul([[1, 2]], [[1, 2]])
