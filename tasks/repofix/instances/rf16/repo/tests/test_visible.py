import unittest

from slug import slugify


class TestSlug(unittest.TestCase):
    def test_words(self):
        self.assertEqual(slugify("Hello World"), "hello-world")

    def test_sep(self):
        self.assertEqual(slugify("a b", sep="_"), "a_b")
