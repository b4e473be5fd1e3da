"""engine/words.py: a count with its noun in the right number, and the closest known name for a misspelt one."""

from __future__ import annotations

import pytest

from engine.words import closest, did_you_mean, plural, plural_word


@pytest.mark.parametrize(
    "n, word, said",
    [
        (1, "worker", "1 worker"),
        (2, "worker", "2 workers"),
        (0, "evaluation", "0 evaluations"),
        (1, "dev evaluation", "1 dev evaluation"),
        (3, "code child", "3 code children"),
        (2, "policy", "2 policies"),
        (2, "day", "2 days"),
        (4, "process", "4 processes"),
        (1.0, "row", "1.0 row"),
    ],
)
def test_plural(n, word, said):
    assert plural(n, word) == said


def test_plural_word_takes_an_irregular_plural_when_told():
    assert plural_word(2, "mouse", "mice") == "mice" and plural_word(1, "mouse", "mice") == "mouse"


def test_closest_is_case_blind_and_none_when_nothing_is_close():
    names = ("hgm", "dgm", "shinka", "openevolve")
    assert closest("HMG", names) == "hgm"
    assert closest("openevolv", names) == "openevolve"
    assert closest("zzzz", names) is None
    assert did_you_mean("shinak", names) == " (did you mean 'shinka'?)"
    assert did_you_mean("--buget", ["--budget"], quote=False) == " (did you mean --budget?)"
    assert did_you_mean("zzzz", names) == ""
