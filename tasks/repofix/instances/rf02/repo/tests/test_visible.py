import unittest

from minstack import MinStack


class TestMinStack(unittest.TestCase):
    def test_push_min(self):
        s = MinStack()
        for v in (5, 3, 7):
            s.push(v)
        self.assertEqual(s.min(), 3)
        self.assertEqual(len(s), 3)

    def test_pop_order(self):
        s = MinStack()
        s.push(1)
        s.push(2)
        self.assertEqual(s.pop(), 2)
        self.assertEqual(s.pop(), 1)

    def test_min_after_pop(self):
        s = MinStack()
        s.push(4)
        s.push(2)
        s.pop()
        self.assertEqual(s.min(), 4)
