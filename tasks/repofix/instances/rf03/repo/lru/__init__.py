from .cache import LRUCache
