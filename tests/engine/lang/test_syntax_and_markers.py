"""tree-sitter syntax checks and EVOLVE-BLOCK markers in C, C++, Rust, Go, Fortran and Julia (issue 17, first part).

Each language: a valid marked program parses and its region is found; a broken one is refused with the
line of the break; markers a block comment swallowed are refused; a marker inside a string is no marker."""

from __future__ import annotations

import pytest

pytest.importorskip("tree_sitter", reason="tree-sitter is not installed (the languages extra)")

from engine.lang.markers import MarkerError, Region, evolve_region
from engine.lang.registry import language_of
from engine.lang.syntax import GrammarMissing, syntax_problem

# name: (file, valid program with markers on lines 1 and 5 (0-based), the same with a break on line 3 (1-based))
PROGRAMS = {
    "c": (
        "heur.c",
        "#include <stdio.h>\n// EVOLVE-BLOCK-START\ndouble w(double x) {\n  return 0.5 * x;\n}\n"
        '// EVOLVE-BLOCK-END\nint main(void) { printf("%f\\n", w(2)); return 0; }\n',
        "return 0.5 * x;",
        "return 0.5 * x",
    ),
    "cpp": (
        "initial.cpp",
        "#include <vector>\n// EVOLVE-BLOCK-START\ndouble w(double x) {\n  return 0.5 * x;\n}\n"
        "// EVOLVE-BLOCK-END\nint main() { std::vector<int> v{1}; return v[0] - 1; }\n",
        "return 0.5 * x;",
        "return (0.5 * x;",
    ),
    "rust": (
        "initial_program.rs",
        "use std::io;\n// EVOLVE-BLOCK-START\nfn w(x: f64) -> f64 {\n    0.5 * x\n}\n"
        '// EVOLVE-BLOCK-END\nfn main() { let _ = io::stdin(); println!("{}", w(2.0)); }\n',
        "0.5 * x",
        "0.5 * x)",
    ),
    "go": (
        "initial.go",
        "package main\n// EVOLVE-BLOCK-START\nfunc w(x float64) float64 {\n\treturn 0.5 * x\n}\n"
        "// EVOLVE-BLOCK-END\nfunc main() { println(w(2)) }\n",
        "return 0.5 * x",
        "return 0.5 * (x",
    ),
    "fortran": (
        "initial.f90",
        "program p\n! EVOLVE-BLOCK-START\n  real :: w\n  w = 0.5 * 2.0\n  print *, w\n"
        "! EVOLVE-BLOCK-END\nend program p\n",
        "w = 0.5 * 2.0",
        "w = 0.5 * (2.0",
    ),
    "julia": (
        "initial.jl",
        "using Printf\n# EVOLVE-BLOCK-START\nfunction w(x)\n    0.5 * x\nend\n"
        '# EVOLVE-BLOCK-END\n@printf("%f\\n", w(2.0))\n',
        "function w(x)",
        "function w(x",
    ),
}


def _language(name: str):
    file = PROGRAMS[name][0]
    language = language_of(file)
    assert language is not None and language.name == name
    try:
        syntax_problem("", language)
    except GrammarMissing as exc:
        pytest.skip(str(exc))
    return language


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_valid_program_parses_and_its_region_is_found(name):
    language = _language(name)
    _, source, _, _ = PROGRAMS[name]
    assert syntax_problem(source, language) is None
    assert evolve_region(source, language) == Region(1, 5)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_syntax_error_is_refused_with_its_line(name):
    language = _language(name)
    _, source, good, bad = PROGRAMS[name]
    broken = source.replace(good, bad, 1)
    assert broken != source
    problem = syntax_problem(broken, language)
    assert problem is not None and problem.startswith(("line 3,", "line 4,", "line 5,")), problem
    assert language.name in problem


@pytest.mark.parametrize("name", [n for n in sorted(PROGRAMS) if n != "fortran"])  # Fortran has no block comment
def test_markers_swallowed_by_a_block_comment_are_refused(name):
    language = _language(name)
    _, source, _, _ = PROGRAMS[name]
    opener, closer = language.block_comment
    line = language.line_comment
    swallowed = source.replace(f"{line} EVOLVE-BLOCK-END\n", f"{opener}\n{line} EVOLVE-BLOCK-END\n{closer}\n")
    assert syntax_problem(swallowed, language) is None  # still valid code: only the markers are wrong
    with pytest.raises(MarkerError, match="EVOLVE-BLOCK-END is inside a block comment"):
        evolve_region(swallowed, language)


def test_a_marker_in_a_string_is_not_a_marker_and_unpaired_markers_are_refused():
    language = _language("cpp")
    source = 'const char* s = "// EVOLVE-BLOCK-START";\nint main() { return 0; }\n'
    assert evolve_region(source, language) is None
    with pytest.raises(MarkerError, match="expected one EVOLVE-BLOCK-START then one EVOLVE-BLOCK-END"):
        evolve_region("// EVOLVE-BLOCK-END\nint x;\n// EVOLVE-BLOCK-START\n", language)


def test_languages_by_extension_and_by_name():
    assert language_of("a/initial.CPP").name == "cpp" and language_of("x.cu").name == "cpp"
    assert language_of("initial.py") is None and language_of("initial.txt") is None
    assert language_of("whatever", named="c++").name == "cpp" and language_of("x", named="Fortran").name == "fortran"
