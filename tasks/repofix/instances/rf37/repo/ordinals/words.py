SUFFIXES = {1: "st", 2: "nd", 3: "rd"}


def ordinal(n):
    """1 -> '1st', 2 -> '2nd', 11 -> '11th', 23 -> '23rd'."""
    if n < 0:
        raise ValueError("negative")
    suffix = SUFFIXES.get(n % 10, "th")
    return f"{n}{suffix}"
