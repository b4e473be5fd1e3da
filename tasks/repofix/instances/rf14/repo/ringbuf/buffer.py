class RingBuffer:
    """Keeps the last `capacity` items appended; oldest first in to_list()."""

    def __init__(self, capacity):
        self.capacity = capacity
        self._slots = [None] * capacity
        self._start = 0
        self._size = 0

    def append(self, item):
        end = self._start + self._size
        self._slots[end] = item
        if self._size < self.capacity:
            self._size += 1
        else:
            self._start = (self._start + 1) % self.capacity

    def to_list(self):
        return [self._slots[(self._start + i) % self.capacity] for i in range(self._size)]

    def __len__(self):
        return self._size
