import heapq


class JobQueue:
    """Jobs by priority (higher first); equal priorities in the order they were added."""

    def __init__(self):
        self._heap = []
        self._count = 0

    def add(self, name, priority=0):
        heapq.heappush(self._heap, (-priority, self._count, name))

    def pop(self):
        if not self._heap:
            raise IndexError("no jobs")
        return heapq.heappop(self._heap)[2]

    def __len__(self):
        return len(self._heap)
