from .groups import group_anagrams
