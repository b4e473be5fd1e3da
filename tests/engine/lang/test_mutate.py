"""Offline mutation on tree-sitter trees (issue 17, first part): children in every language parse, stay inside
the EVOLVE-BLOCK, and the same seed gives the same child. Prints, per language, the share of mutations that
gave a child (every child parses: the mutator checks) and, where the compilers are here (engine/lang/compile_check.py),
the share that compile."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tree_sitter", reason="tree-sitter is not installed (the languages extra)")

from engine.lang.markers import evolve_region
from engine.lang.mutate import mutate
from engine.lang.registry import language_of
from engine.lang.syntax import syntax_problem
from engine.mutators.base import MutationError
from tests.engine.lang.test_syntax_and_markers import PROGRAMS, _language

TRIES = 40
COMPILED = 12  # children given to the compiler (engine/lang/compile_check.py) per language, where it is installed


def compiler_for(language):
    """The run's compile check for `language` under the process backend, or None where its compiler is missing."""
    from engine.lang.compile_check import choose

    return choose(language, "auto", "process")[0]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_children_parse_stay_in_the_block_and_repeat_for_a_seed(name):
    language = _language(name)
    _, source, _, _ = PROGRAMS[name]
    region = evolve_region(source, language)
    check, program = compiler_for(language), "program" + language.extensions[0]
    lines = source.splitlines()
    outside = lines[: region.start_line + 1] + lines[region.end_line :]
    made, compiled, kinds = 0, [], set()
    for seed in range(TRIES):
        try:
            child, said = mutate(source, language, np.random.default_rng(seed), region)
        except MutationError:
            continue
        made += 1
        kinds.add(said.split()[0])
        assert syntax_problem(child, language) is None
        child_lines = child.splitlines()
        assert child_lines[: region.start_line + 1] == outside[: region.start_line + 1]  # before the block: as it was
        assert child_lines[-(len(lines) - region.end_line) :] == lines[region.end_line :]  # after it: as it was
        if check is not None and len(compiled) < COMPILED:
            problem = check.problem({program: child}, program)
            compiled.append(problem is None)
            assert problem is None or "error" in problem.lower() or program in problem, problem
    assert mutate(source, language, np.random.default_rng(7), region) == mutate(
        source, language, np.random.default_rng(7), region
    )
    share = made / TRIES
    print(
        f"{name}: {made}/{TRIES} mutations gave a child that parses ({share:.0%}); operators {sorted(kinds)}"
        + (f"; {sum(compiled)}/{len(compiled)} compile ({check.said})" if compiled else "; no compiler here")
    )
    assert share >= 0.8 and {"const", "numeric"} <= kinds
    if compiled:
        assert sum(compiled) / len(compiled) >= 0.8


def test_statements_of_a_block_are_swapped_or_dropped_and_nothing_outside_the_block_changes():
    language = _language("cpp")
    source = (
        "int helper() { int a = 1; int b = 2; return a + b; }\n// EVOLVE-BLOCK-START\n"
        "double w(double x) {\n  double y = x * 3.0;\n  y = y - 1.0;\n  y = y / 2.0;\n  return y;\n}\n"
        "// EVOLVE-BLOCK-END\nint main() { return helper() - 3; }\n"
    )
    region = evolve_region(source, language)
    seen = set()
    for seed in range(60):
        child, said = mutate(source, language, np.random.default_rng(seed), region)
        seen.add(said.split()[0])
        assert child.startswith("int helper() { int a = 1; int b = 2; return a + b; }\n")  # outside: untouched
        assert child.endswith("// EVOLVE-BLOCK-END\nint main() { return helper() - 3; }\n")
    assert {"const", "numeric", "swap_op", "swap_stmt", "delete"} <= seen, seen
    with pytest.raises(MutationError, match="nothing to mutate"):
        mutate(
            "// EVOLVE-BLOCK-START\n// EVOLVE-BLOCK-END\nint main() { return 0; }\n",
            language,
            np.random.default_rng(0),
            evolve_region("// EVOLVE-BLOCK-START\n// EVOLVE-BLOCK-END\n", language),
        )
    assert language_of("x.cpp") == language
