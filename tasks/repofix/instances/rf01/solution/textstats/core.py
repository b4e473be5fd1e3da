import re

WORD = re.compile(r"[A-Za-z']+")


def count_words(text):
    """Count how often each word occurs, ignoring case and punctuation."""
    counts = {}
    for word in WORD.findall(text.lower()):
        counts[word] = counts.get(word, 0) + 1
    return counts


def most_common(text, n=1):
    """The n most frequent words, most frequent first (ties: alphabetical)."""
    counts = count_words(text)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return [word for word, _ in ranked[:n]]
