"""The pyflakes gate: a child that would die of a name error is refused before any sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.mutators import new_name_problem
from engine.mutators.flakes import name_problems

ROOT = Path(__file__).resolve().parents[3]
SEED = (ROOT / "agents_seed/circle_packing/agent.py").read_text()


def test_an_unbound_local_is_refused_and_the_valid_program_admitted() -> None:
    # a statement moved below its first reader: UnboundLocalError when run
    broken = SEED.replace("    rows = 5\n", "").replace(
        "    y = (row + 0.5) / rows\n", "    y = (row + 0.5) / rows\n    rows = 5\n"
    )
    assert broken != SEED
    reason = new_name_problem({"agent.py": SEED}, {"agent.py": broken})
    assert reason is not None and "'rows'" in reason and "agent.py line" in reason
    assert new_name_problem({"agent.py": SEED}, {"agent.py": SEED.replace("per_row = 5.2", "per_row = 5.3")}) is None


def test_a_name_nothing_binds_and_a_shadowed_global_read_too_early() -> None:
    source = "LIMIT = 3\n\ndef f(x):\n    y = LIMIT + x\n    LIMIT = 2\n    return y + z\n"
    kinds = {(kind, name) for kind, name, _ in name_problems(source, "a.py")}
    assert kinds == {("read before assignment", "LIMIT"), ("undefined name", "z")}


def test_a_loop_that_binds_the_name_later_is_excused() -> None:
    source = (
        "def f(xs):\n    for i in xs:\n        if i > 0:\n            print(last)\n        last = i\n    return 0\n"
    )
    assert name_problems(source, "a.py") == []


def test_only_problems_the_parent_lacks_count() -> None:
    parent = "def f(x):\n    return x + injected_by_host\n"  # a name the host provides at run time
    child = "def f(x):\n    return 2 * x + injected_by_host\n"
    assert new_name_problem({"a.py": parent}, {"a.py": child}) is None
    worse = "def f(x):\n    return 2 * x + injected_by_host + other\n"
    assert "'other'" in new_name_problem({"a.py": parent}, {"a.py": worse})


@pytest.mark.slow
def test_the_offline_mutator_never_hands_over_an_unbound_read() -> None:
    import numpy as np

    from engine.mutators import MutationContext, OfflineMutator

    mutator, context = OfflineMutator(), MutationContext("agent.py", "construct", ())
    rng = np.random.default_rng(0)
    for _ in range(150):
        child = mutator.propose({"agent.py": SEED}, context, rng).files
        assert new_name_problem({"agent.py": SEED}, child) is None
