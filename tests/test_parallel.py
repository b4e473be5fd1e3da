"""tests/parallel.py names tests by path: every name must still point at a test, or its rule silently lapses."""

from __future__ import annotations

import ast

from engine.pyast import parse  # ast.parse that survives other threads' parses (cpython#106905)
from tests.conftest import REPO
from tests.parallel import ALONE, GROUPS, group_of, runs_alone


def test_every_name_is_a_test_file_or_a_test_in_it():
    lapsed = []
    for key in [*GROUPS, *ALONE]:
        path, _, name = key.partition("::")
        if not (REPO / path).is_file():
            lapsed.append(f"{path} does not exist")
        elif name and name.partition("[")[0] not in {  # a test, or one parametrization of it: test[id]
            node.name for node in parse((REPO / path).read_text()).body if isinstance(node, ast.FunctionDef)
        }:
            lapsed.append(f"{path} has no test {name}")
    assert lapsed == []


def test_a_name_covers_the_file_or_the_test_and_its_parametrizations():
    assert group_of("tests/test_readme.py::test_readme_command_exits_0[L22 python -m engine.search]") == "readme"
    assert group_of("tests/test_readme_cluster.py::test_the_readme_cluster_commands_work_as_written") == "ray"
    assert group_of("tests/test_readme.pyc::x") is None
    assert runs_alone("tests/engine/sandbox/test_process.py::test_jobs_run_concurrently")
    assert not runs_alone("tests/engine/sandbox/test_process.py::test_jobs_run_concurrently_too")
