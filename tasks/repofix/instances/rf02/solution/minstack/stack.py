class MinStack:
    """A stack that also reports its smallest item in O(1)."""

    def __init__(self):
        self._items = []
        self._mins = []

    def push(self, value):
        self._items.append(value)
        if not self._mins or value <= self._mins[-1]:
            self._mins.append(value)

    def pop(self):
        if not self._items:
            raise IndexError("pop from empty stack")
        value = self._items.pop()
        if value == self._mins[-1]:
            self._mins.pop()
        return value

    def min(self):
        if not self._mins:
            raise IndexError("min of empty stack")
        return self._mins[-1]

    def __len__(self):
        return len(self._items)
