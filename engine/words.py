"""Words a message needs: a count with its noun in the right number, and a suggestion for a misspelt name.

Imports only the standard library (difflib, lazily), so the configuration and every command line can use it.
"""

from __future__ import annotations

from collections.abc import Iterable

_IRREGULAR = {"child": "children", "datum": "data"}


def plural(n: int | float, word: str, many: str | None = None) -> str:
    """`n` and `word`, in the plural unless n is 1: plural(1, "worker") -> "1 worker", plural(2, ...) -> "2 workers"."""
    return f"{n} {plural_word(n, word, many)}"


def plural_word(n: int | float, word: str, many: str | None = None) -> str:
    """`word` alone, in the number `n` asks for (`many`: its plural, where adding s is wrong)."""
    if n == 1:
        return word
    if many is not None:
        return many
    head, space, last = word.rpartition(" ")  # "dev evaluation": the last word takes the number
    return head + space + _plural_of(last)


def _plural_of(word: str) -> str:
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def closest(value: str, known: Iterable[str]) -> str | None:
    """The known name that `value` most likely misspells, or None when none is close."""
    from difflib import get_close_matches

    by_lower = {name.lower(): name for name in known}  # HGM is hgm misspelt too
    found = get_close_matches(value.lower(), list(by_lower), n=1, cutoff=0.6)
    return by_lower[found[0]] if found else None


def did_you_mean(value: str, known: Iterable[str], quote: bool = True) -> str:
    """ " (did you mean 'hgm'?)" for a misspelt name, else "": to follow the name in a one-line error."""
    match = closest(value, known)
    if match is None:
        return ""
    return f" (did you mean {match!r}?)" if quote else f" (did you mean {match}?)"
