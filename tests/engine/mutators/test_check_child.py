from __future__ import annotations

from pathlib import Path

import pytest

from engine.mutators import check_child

ROOT = Path(__file__).resolve().parents[3]
SEED = (ROOT / "agents_seed/binpack/agent.py").read_text()
BEST_FIT = (ROOT / "agents_seed/binpack/best_fit.py").read_text()
ARGS = ("item", "bins")


def check(source: str, **extra: str) -> str | None:
    return check_child({"agent.py": source, **extra}, "agent.py", "priority", ARGS)


def test_accepts_seed_and_reference() -> None:
    assert check(SEED) is None
    assert check(BEST_FIT) is None


def test_accepts_common_module_level_code() -> None:
    source = (
        '"""doc"""\nfrom __future__ import annotations\nimport numpy as np\n'
        "try:\n    import scipy\nexcept ImportError:\n    scipy = None\n"
        "EPS = 1e-6\nWEIGHTS = np.array([1.0, 2.0])\n__all__ = ['priority']\n"
        "def _helper(x):\n    return x * EPS\n"
        "def priority(item, bins, scale=1.0, *, extra=None):\n"
        "    total = 0\n    for k in range(2):\n        total += k\n"
        "    return _helper(bins) * scale + [v for v in [total]][0]\n"
        "if __name__ == '__main__':\n    while True:\n        pass\n"
    )
    assert check(source) is None


def test_rejects_missing_entry_file() -> None:
    reason = check_child({"other.py": SEED}, "agent.py", "priority", ARGS)
    assert reason is not None and "agent.py" in reason and "missing" in reason


def test_rejects_syntax_error_with_line() -> None:
    reason = check(SEED.replace("return np.zeros_like(bins)", "return np.zeros_like(bins"))
    assert reason is not None and "syntax error" in reason and "line 11" in reason


def test_rejects_syntax_error_in_other_python_file() -> None:
    reason = check(SEED, **{"helpers.py": "def f(:\n"})
    assert reason is not None and "helpers.py" in reason


def test_rejects_missing_function() -> None:
    reason = check(SEED.replace("def priority(", "def score("))
    assert reason is not None and "priority" in reason and "missing" in reason


def test_rejects_nested_or_class_level_entry() -> None:
    source = "class A:\n    def priority(self, item, bins):\n        return bins\n"
    assert "missing" in (check(source) or "")


@pytest.mark.parametrize(
    "signature",
    [
        "priority(x, bins)",
        "priority(bins, item)",
        "priority(item)",
        "priority(item, bins, extra)",
        "priority(item, bins, *, key)",
        "priority(*args)",
    ],
)
def test_rejects_changed_parameters(signature: str) -> None:
    reason = check(f"def {signature}:\n    return 0\n")
    assert reason is not None and "signature" in reason and "priority(item, bins)" in reason


def test_rejects_code_that_runs_on_import() -> None:
    assert "while loop" in (check(SEED + "\nwhile True:\n    pass\n") or "")
    assert "raise" in (check(SEED + "\nraise SystemExit\n") or "")
    assert "no effect" in (check(SEED + "\nbins + 1\n") or "")


def test_rejects_undefined_name() -> None:
    reason = check(SEED.replace("np.zeros_like(bins)", "np.zeros_like(bins) + math.pi * gap"))
    assert reason == "undefined name 'gap' in priority (agent.py line 11)"


def test_undefined_name_check_is_conservative() -> None:
    # bound later, bound in a branch, a global assigned in a function, a star import: all accepted
    assert check("def priority(item, bins):\n    if item:\n        y = 1\n    return y + bins\n") is None
    assert check("def priority(item, bins):\n    global G\n    G = 1\n    return G\n") is None
    assert check("from numpy import *\ndef priority(item, bins):\n    return zeros_like(bins)\n") is None
    assert check("def priority(item: Foo, bins) -> Bar:\n    return bins\n") is None
