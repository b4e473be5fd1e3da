import unittest

from ringbuf import RingBuffer


class TestRing(unittest.TestCase):
    def test_fill(self):
        r = RingBuffer(3)
        for i in range(3):
            r.append(i)
        self.assertEqual(r.to_list(), [0, 1, 2])

    def test_overwrite_once(self):
        r = RingBuffer(2)
        for i in range(3):
            r.append(i)
        self.assertEqual(r.to_list(), [1, 2])
