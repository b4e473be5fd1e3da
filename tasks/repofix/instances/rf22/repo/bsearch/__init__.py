from .search import find_index
