def group_anagrams(words):
    """Groups of words that are anagrams of each other, ignoring case.

    Each group keeps the words' input order; groups are ordered by their first word's position."""
    groups = {}
    for word in words:
        key = "".join(sorted(word.lower()))
        groups.setdefault(key, []).append(word)
    return list(groups.values())
