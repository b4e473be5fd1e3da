import unittest

from pager import page_count, paginate


class TestPages(unittest.TestCase):
    def test_count(self):
        self.assertEqual(page_count(21, 10), 3)

    def test_bad_page(self):
        with self.assertRaises(ValueError):
            paginate([1], 0)
