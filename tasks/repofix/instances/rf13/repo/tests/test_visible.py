import unittest

from todo import TodoItem


class TestTodo(unittest.TestCase):
    def test_tag(self):
        item = TodoItem("write", ["a"])
        item.tag("B").tag("b")
        self.assertEqual(item.tags, ["a", "b"])

    def test_complete(self):
        item = TodoItem("x", [])
        item.complete()
        self.assertTrue(item.done)
