import unittest

from anagrams import group_anagrams


class TestGroups(unittest.TestCase):
    def test_lower(self):
        self.assertEqual(group_anagrams(["eat", "tea", "tan", "ate", "nat"]),
                         [["eat", "tea", "ate"], ["tan", "nat"]])

    def test_case(self):
        self.assertEqual(group_anagrams(["Listen", "silent"]), [["Listen", "silent"]])
