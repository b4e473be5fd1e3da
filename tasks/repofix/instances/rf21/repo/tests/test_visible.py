import unittest

from casing import camel_to_snake, snake_to_camel


class TestCasing(unittest.TestCase):
    def test_lower_camel(self):
        self.assertEqual(camel_to_snake("parseHttpRequest"), "parse_http_request")

    def test_back(self):
        self.assertEqual(snake_to_camel("a_b_c"), "aBC")
