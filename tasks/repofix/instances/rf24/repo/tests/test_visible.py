import unittest

from jobs import JobQueue


class TestQueue(unittest.TestCase):
    def test_priority(self):
        q = JobQueue()
        q.add("low", 1)
        q.add("high", 5)
        self.assertEqual(q.pop(), "high")
        self.assertEqual(len(q), 1)

    def test_fifo_ties(self):
        q = JobQueue()
        q.add("b")
        q.add("a")
        self.assertEqual([q.pop(), q.pop()], ["b", "a"])
