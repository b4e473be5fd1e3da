"""Offline mutation on tree-sitter trees (issue 17, first part): children in every language parse, stay inside
the EVOLVE-BLOCK, and the same seed gives the same child. Prints, per language, the share of mutations that
gave a child (every child parses: the mutator checks) and, where g++ / rustc are here, the share that compile."""
from __future__ import annotations

import shutil
import subprocess

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
COMPILERS = {"cpp": ["g++", "-fsyntax-only", "-x", "c++", "-"], "c": ["gcc", "-fsyntax-only", "-x", "c", "-"]}


def compiles(name: str, source: str) -> bool | None:
    command = COMPILERS.get(name)
    if command is None or shutil.which(command[0]) is None:
        return None
    return subprocess.run(command, input=source, text=True, capture_output=True, timeout=60).returncode == 0


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_children_parse_stay_in_the_block_and_repeat_for_a_seed(name):
    language = _language(name)
    _, source, _, _ = PROGRAMS[name]
    region = evolve_region(source, language)
    lines = source.splitlines()
    outside = lines[:region.start_line + 1] + lines[region.end_line:]
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
        assert child_lines[:region.start_line + 1] == outside[:region.start_line + 1]  # before the block: as it was
        assert child_lines[-(len(lines) - region.end_line):] == lines[region.end_line:]  # after it: as it was
        compiled.append(compiles(name, child))
    assert mutate(source, language, np.random.default_rng(7), region) == \
        mutate(source, language, np.random.default_rng(7), region)
    share = made / TRIES
    ok = [c for c in compiled if c is not None]
    print(f"{name}: {made}/{TRIES} mutations gave a child that parses ({share:.0%}); operators {sorted(kinds)}"
          + (f"; {sum(ok)}/{len(ok)} compile" if ok else ""))
    assert share >= 0.8 and "const" in kinds
    if ok:
        assert sum(ok) / len(ok) >= 0.8


def test_statements_of_a_block_are_swapped_or_dropped_and_nothing_outside_the_block_changes():
    language = _language("cpp")
    source = ("int helper() { int a = 1; int b = 2; return a + b; }\n// EVOLVE-BLOCK-START\n"
              "double w(double x) {\n  double y = x * 3.0;\n  y = y - 1.0;\n  y = y / 2.0;\n  return y;\n}\n"
              "// EVOLVE-BLOCK-END\nint main() { return helper() - 3; }\n")
    region = evolve_region(source, language)
    seen = set()
    for seed in range(60):
        child, said = mutate(source, language, np.random.default_rng(seed), region)
        seen.add(said.split()[0])
        assert child.startswith("int helper() { int a = 1; int b = 2; return a + b; }\n")  # outside: untouched
        assert child.endswith("// EVOLVE-BLOCK-END\nint main() { return helper() - 3; }\n")
    assert {"const", "swap_op", "swap", "drop"} <= seen, seen
    with pytest.raises(MutationError, match="nothing to mutate"):
        mutate("// EVOLVE-BLOCK-START\n// EVOLVE-BLOCK-END\nint main() { return 0; }\n", language,
               np.random.default_rng(0), evolve_region("// EVOLVE-BLOCK-START\n// EVOLVE-BLOCK-END\n", language))
    assert language_of("x.cpp") == language
