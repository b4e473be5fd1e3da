class TodoItem:
    def __init__(self, title, tags=[]):
        self.title = title
        self.tags = tags
        self.done = False

    def tag(self, label):
        """Add a label once (labels are lower-case)."""
        label = label.lower()
        if label not in self.tags:
            self.tags.append(label)
        return self

    def complete(self):
        self.done = True
