"""The optional compile check (issue 17): each language's compiler, inside the run's sandbox, refuses what the
tree-sitter grammar admits (an undeclared name, a type error) with the compiler's own line; a run's header and
its session event say which checks its children go through; a child the compiler refuses is never evaluated."""

from __future__ import annotations

import shutil

import pytest

pytest.importorskip("tree_sitter", reason="tree-sitter is not installed (the languages extra)")

from engine.errors import UserError
from engine.front.cli import build_parser
from engine.front.run import compile_check_for, run_from_args
from engine.lang.compile_check import choose, first_error
from engine.lang.registry import language_of
from engine.lang.syntax import syntax_problem
from engine.sandbox.bwrap import bwrap_available
from tests.conftest import REPO
from tests.engine.test_search_e2e import only_run, read

# file -> (compiler, a program that compiles, one that parses but does not compile, what the compiler says)
PROGRAMS = {
    "a.c": ("gcc", "int main(void) { return 0; }\n", "int main(void) { return z; }\n", "undeclared"),
    "a.cpp": (
        "g++",
        '#include <cstdio>\nint main() { std::printf("%d\\n", 3); }\n',
        "int main() { return undeclared_name; }\n",
        "not declared",
    ),
    "a.rs": ("rustc", 'fn main() { println!("{}", 3); }\n', 'fn main() { let x: i32 = "s"; }\n', "mismatched types"),
    "a.go": (
        "go",
        'package main\nimport "fmt"\nfunc main() { fmt.Println(3) }\n',
        "package main\nfunc main() { x := y }\n",
        "undeclared name: y",
    ),
    "a.f90": (
        "gfortran",
        "program p\n  print *, 3\nend program p\n",
        "program p\n  implicit none\n  print *, q\nend program p\n",
        "IMPLICIT type",
    ),
}
BWRAP, BWRAP_WHY = bwrap_available()


def _compilers_image() -> tuple[bool, str]:
    """Whether the docker compilers' image is on a daemon here (CI builds it; a test never does)."""
    from engine.sandbox.docker_build import COMPILERS_IMAGE
    from engine.sandbox.docker_daemon import docker_available

    ok, why = docker_available(COMPILERS_IMAGE, build=False)
    return ok, f"{why} (python -m engine.sandbox.docker_prebuild --compilers builds it)" if not ok else ""


DOCKER, DOCKER_WHY = _compilers_image()
BACKENDS = [
    "process",
    pytest.param("bwrap", marks=[pytest.mark.bwrap, pytest.mark.skipif(not BWRAP, reason=BWRAP_WHY)]),
    pytest.param("docker", marks=[pytest.mark.docker, pytest.mark.skipif(not DOCKER, reason=DOCKER_WHY)]),
]


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("path", sorted(PROGRAMS))
def test_the_compiler_refuses_what_the_grammar_admits(path, backend):
    compiler, good, bad, said = PROGRAMS[path]
    if backend != "docker" and shutil.which(compiler) is None:  # PATH's, rustup's included; docker: the image's
        pytest.skip(f"{compiler} is not installed")
    language = language_of(path)
    check, header = choose(language, "auto", backend)
    assert check is not None and f"in {backend}" in header and compiler in header
    assert syntax_problem(bad, language) is None  # the grammar cannot see it
    assert check.problem({path: good}, path) is None
    problem = check.problem({path: bad}, path)
    assert problem is not None and said in problem and problem.startswith(check.said), problem


def test_the_compiler_cannot_read_host_files_under_bwrap(tmp_path):
    """An #include of a host file compiles under process (it is there) and fails under bwrap (it is not)."""
    if not BWRAP or shutil.which("g++") is None:
        pytest.skip(BWRAP_WHY or "g++ is not installed")
    secret = tmp_path / "secret.h"
    secret.write_text("int secret_value = 42;\n")
    program = f'#include "{secret}"\nint main() {{ return secret_value; }}\n'
    cpp = language_of("a.cpp")
    assert choose(cpp, "auto", "process")[0].problem({"a.cpp": program}, "a.cpp") is None
    refused = choose(cpp, "auto", "bwrap")[0].problem({"a.cpp": program}, "a.cpp")
    assert refused is not None and "No such file" in refused, refused


@pytest.mark.docker
@pytest.mark.skipif(not DOCKER, reason=DOCKER_WHY)
def test_the_compiler_cannot_read_host_files_under_docker(tmp_path):
    """Under docker the compiler runs in the container: a host file's #include is not there."""
    secret = tmp_path / "secret.h"
    secret.write_text("int secret_value = 42;\n")
    program = f'#include "{secret}"\nint main() {{ return secret_value; }}\n'
    check, header = choose(language_of("a.cpp"), "auto", "docker")
    assert "compiled by g++ -fsyntax-only (in docker)" in header
    refused = check.problem({"a.cpp": program}, "a.cpp")
    assert refused is not None and "No such file" in refused, refused


@pytest.mark.docker
@pytest.mark.skipif(not DOCKER, reason=DOCKER_WHY)
def test_an_image_without_the_compiler_is_probed_once_and_said():
    from engine.sandbox.docker_build import DEFAULT_IMAGE  # python3 and numpy, no compiler

    check, header = choose(language_of("a.cpp"), "auto", "docker", image=DEFAULT_IMAGE)
    assert check is None and f"no compile check: g++ does not run in image {DEFAULT_IMAGE!r}" in header
    with pytest.raises(ValueError, match="--compile-check on: g\\+\\+ does not run in image"):
        choose(language_of("a.cpp"), "on", "docker", image=DEFAULT_IMAGE)


def test_which_checks_a_run_uses_is_said_and_misuse_is_one_line():
    cpp = language_of("initial.cpp")
    none: tuple = ()  # no compiler found on PATH
    assert choose(cpp, "off", "bwrap", toolchains=none) == (
        None,
        "children checked by the tree-sitter cpp grammar (compile check off)",
    )
    assert choose(language_of("a.jl"), "auto", "bwrap", toolchains=none)[1].endswith(
        "(julia has no separate compile check)"
    )
    assert choose(cpp, "auto", "process", toolchains=none)[1].endswith("(no compile check: g++ not found on PATH)")
    with pytest.raises(ValueError, match="--compile-check on: rustc not found on PATH"):
        choose(language_of("a.rs"), "on", "bwrap", toolchains=none)
    assert "no compile check on Ray" in choose(cpp, "auto", "docker", executor="ray")[1]
    assert "no compile check on Ray" in choose(cpp, "auto", "bwrap", executor="ray")[1]
    assert choose(None, "on", "bwrap") == (None, "")  # a Python task: nothing to say
    with pytest.raises(ValueError, match="--compile-check on: no compile check on Ray"):
        choose(cpp, "on", "docker", executor="ray")
    with pytest.raises(UserError, match="--compile-check must be"):
        run_from_args(build_parser().parse_args(["--task", "binpack", "--compile-check", "maybe"]))

    class Task:
        entry_file = "initial.cpp"

    config = build_parser().parse_args(["--compile-check", "on", "--executor", "ray"])
    from engine.config.arguments import config_from_args

    with pytest.raises(UserError, match="no compile check on Ray"):
        compile_check_for(config_from_args(config), Task(), "bwrap")


def test_first_error_picks_the_line_that_says_where_or_what():
    assert (
        first_error("# command-line-arguments\nvet: ./a.go:2:20: undeclared name: y\n", "a.go")
        == "vet: ./a.go:2:20: undeclared name: y"
    )
    assert (
        first_error("error[E0308]: mismatched types\n --> a.rs:1:26\n", "a.rs")
        == "error[E0308]: mismatched types (a.rs:1:26)"
    )
    assert first_error("", "a.c") == "failed, saying nothing"


@pytest.mark.slow
def test_a_child_the_compiler_refuses_is_stored_invalid_and_never_evaluated(tmp_path):
    """Through the LLM path (litellm's mock_response): one answer declares nothing it uses; the header and the
    session event name the compile check; that child is invalid with g++'s line; the others are evaluated."""
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed (Debian: g++)")
    folder = REPO / "tests" / "fixtures" / "tasks" / "shinka_cpp"
    answers = iter(["    return 0.65 * x + 1.0;", "    return slope * x + 1.0;", "    return 0.7 * x + 1.1;"] * 4)

    def model(name, messages, attempt):
        return (
            "Change: a new slope.\n\ninitial.cpp\n<<<<<<< SEARCH\n    return 0.1 * x + 3.0;\n=======\n"
            f"{next(answers)}\n>>>>>>> REPLACE\n"
        )

    argv = [
        "--task",
        str(folder),
        "--budget",
        "4",
        "--model",
        "openai/gpt-4o-mini",
        "--workers",
        "1",
        "--run-dir",
        str(tmp_path / "runs"),
        "--quiet",
    ]
    assert run_from_args(build_parser().parse_args(argv), llm_mock=model) == 0
    run = only_run(tmp_path / "runs")
    checks = read(run, "SELECT detail->>'checks' FROM events WHERE kind = 'session'")[0][0]
    assert checks.startswith("children checked by the tree-sitter cpp grammar, then compiled by g++ -fsyntax-only")
    refused = read(run, "SELECT id, reason FROM nodes WHERE reason LIKE 'g++ -fsyntax-only%'")
    assert refused and "slope" in refused[0][1], refused
    assert read(run, f"SELECT count(*) FROM evaluations WHERE node_id = {refused[0][0]}")[0][0] == 0
    assert read(run, "SELECT count(*) FROM nodes WHERE status = 'valid' AND id > 0")[0][0] >= 1
