import unittest

from pwcheck import is_strong, problems


class TestRules(unittest.TestCase):
    def test_strong(self):
        self.assertTrue(is_strong("Secret123456"))

    def test_weak(self):
        self.assertEqual(problems("abc"), ["too short", "no digit", "no upper-case letter"])
