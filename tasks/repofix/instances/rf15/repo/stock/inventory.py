class Inventory:
    """Item counts by name; names are case-insensitive."""

    def __init__(self):
        self._counts = {}

    def add(self, name, qty=1):
        key = name.lower()
        self._counts[key] = self._counts.get(key, 0) + qty

    def remove(self, name, qty=1):
        key = name
        have = self._counts.get(key, 0)
        if qty > have:
            raise KeyError(f"only {have} of {name}")
        if qty == have:
            del self._counts[key]
        else:
            self._counts[key] = have - qty

    def count(self, name):
        return self._counts.get(name.lower(), 0)

    def names(self):
        return sorted(self._counts)
