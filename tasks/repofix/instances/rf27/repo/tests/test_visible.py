import unittest

from chunking import chunked


class TestChunks(unittest.TestCase):
    def test_even(self):
        self.assertEqual(chunked([1, 2, 3, 4], 2), [[1, 2], [3, 4]])

    def test_uneven(self):
        self.assertEqual(chunked([1, 2, 3], 2), [[1, 2], [3]])
