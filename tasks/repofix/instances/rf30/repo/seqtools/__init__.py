from .unique import unique, duplicates
