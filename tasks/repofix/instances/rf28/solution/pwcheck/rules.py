import string

MIN_LENGTH = 8


def problems(password):
    """What a password lacks: at least MIN_LENGTH characters, a digit, an upper-case letter."""
    found = []
    if len(password) < MIN_LENGTH:
        found.append("too short")
    if not any(c.isdigit() for c in password):
        found.append("no digit")
    if not any(c in string.ascii_uppercase for c in password):
        found.append("no upper-case letter")
    return found


def is_strong(password):
    return not problems(password)
