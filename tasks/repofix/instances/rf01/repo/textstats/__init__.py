from .core import count_words, most_common
