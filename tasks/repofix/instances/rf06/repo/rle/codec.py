def encode(text):
    """Run-length encode: 'aaab' -> [('a', 3), ('b', 1)]."""
    runs = []
    if not text:
        return runs
    current, count = text[0], 1
    for ch in text[1:]:
        if ch == current:
            count += 1
        else:
            runs.append((current, count))
            current, count = ch, 1
    return runs


def decode(runs):
    return "".join(ch * count for ch, count in runs)
