PAIRS = {")": "(", "]": "[", "}": "{"}


def is_balanced(text):
    """True when every bracket in text is closed in the right order; other characters are ignored."""
    stack = []
    for ch in text:
        if ch in "([{":
            stack.append(ch)
        elif ch in PAIRS:
            if not stack or stack.pop() != PAIRS[ch]:
                return False
    return True
