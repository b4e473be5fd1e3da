"""Every compiled-language task folder of the fixtures, in both engines' formats (issue 17's "must hold"):
ShinkaEvolve's `initial.<ext>` + evaluate.py and OpenEvolve's `initial_program.<ext>` + evaluator.py, in C++,
Rust, Go and Fortran. The eight folders pose the same problem (fit the hidden line y = 0.7 x + 1, the seed says
0.1 x + 3), so one set of tests covers them: the folder is detected and its seed checks (every folder); a search
under the default sandbox and workers ends with a final node measured on the holdout, its valid nodes parse and
its children build and run, and the run resumes to a larger budget (four folders); an LLM run replays to the same
tree at no cost (the other four). Each of the two whole-search tests meets every language and both formats.

Each language skips with the reason when its compiler (or its tree-sitter grammar) is missing. Budgets are
small: every evaluation compiles a program, and eight folders run these tests.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
from dataclasses import dataclass

import pytest

pytest.importorskip("tree_sitter", reason="tree-sitter is not installed (the languages extra)")

from archive import Archive  # noqa: E402
from engine.front.cli import build_parser  # noqa: E402
from engine.front.run import run_from_args  # noqa: E402
from engine.lang.registry import language_of  # noqa: E402
from engine.lang.syntax import syntax_problem  # noqa: E402
from engine.mutators import check_child  # noqa: E402
from tasks.adapters import detect, make_adapted_task  # noqa: E402
from tests.conftest import REPO  # noqa: E402
from tests.engine.test_search_e2e import only_run, read  # noqa: E402

pytestmark = pytest.mark.slow  # whole searches that compile every child

FIXTURES = REPO / "tests" / "fixtures" / "tasks"
# the failures a child may cause itself (a mutation the compiler refuses, a program that prints inf or nan);
# anything else (a missing compiler, a sandbox that cannot run it) is a failure of the setup
OWN_FAILURE = re.compile(r"build failed|exit -?\d+, \d+ numbers|not a number|no finite combined_score")


@dataclass(frozen=True)
class Language:
    """What the tests need to know of one language: its toolchain, and how its seed writes the estimate."""

    name: str
    compiler: str
    debian: str
    extension: str
    estimate: str  # a regex for the seed's (and each child's) estimate line
    line: str  # that line with slope {a} and intercept 1, for the mocked model's answers
    broken: str  # the estimate line with a syntax error

    def missing(self) -> str | None:
        if shutil.which(self.compiler) is None:  # the one on PATH, wherever it is (engine/lang/toolchain.py)
            return f"{self.compiler} is not installed (Debian: {self.debian})"
        grammar = language_of(f"x{self.extension}").grammar
        if importlib.util.find_spec(grammar) is None:
            return f"{grammar} is not installed (the languages extra)"
        return None


LANGUAGES = {
    "cpp": Language(
        "cpp",
        "g++",
        "g++",
        ".cpp",
        r"^    return [^\n]*x[^\n]*;$",
        "    return {a} * x + 1.0;",
        "    return 0.1 * x + ;",
    ),
    "rust": Language(
        "rust",
        "rustc",
        "rustc",
        ".rs",
        r"^    return [^\n]*x[^\n]*;$",
        "    return {a} * x + 1.0;",
        "    return 0.1 * x + ;",
    ),
    "go": Language(
        "go", "go", "golang-go", ".go", r"^\treturn [^\n]*x[^\n]*$", "\treturn {a}*x + 1.0", "\treturn 0.1*x + "
    ),
    "fortran": Language(
        "fortran",
        "gfortran",
        "gfortran",
        ".f90",
        r"^        y = [^\n]*x[^\n]*$",
        "        y = {a}d0 * x + 1.0d0",
        "        y = 0.1d0 * * x + 3.0d0",
    ),
}
FOLDERS = [(f"{fmt}_{lang}", fmt) for fmt in ("shinka", "openevolve") for lang in LANGUAGES]


def cases(half: int | None = None):
    """Every folder; or, for the two whole-search tests, `half` 0 or 1 of them, so that each test still meets
    every language and every format (a Latin square: shinka_cpp, shinka_go, openevolve_rust, openevolve_fortran
    in one, the other four in the other). Resuming and replaying do not depend on the pair, and half the folders
    keep the suite's time: each evaluation compiles a program, and Go's build takes seconds."""
    languages = list(LANGUAGES)
    for folder, fmt in FOLDERS:
        parity = (("shinka", "openevolve").index(fmt) + languages.index(folder.split("_", 1)[1])) % 2
        if half is not None and parity != half:
            continue
        language = LANGUAGES[folder.split("_", 1)[1]]
        why = language.missing()
        yield pytest.param(
            folder, fmt, language, id=folder, marks=pytest.mark.skipif(why is not None, reason=why or "")
        )


def estimate_line(source: str, language: Language) -> tuple[int, str]:
    """(line number, text) of the estimate line in `source`."""
    found = re.search(language.estimate, source, re.M)
    assert found, source
    return source.count("\n", 0, found.start()) + 1, found.group(0)


@pytest.mark.parametrize("folder,fmt,language", cases())
def test_the_folder_is_detected_and_its_seed_checks_before_a_sandbox(folder, fmt, language):
    path = FIXTURES / folder
    assert detect(path) == {"shinka": "shinkaevolve", "openevolve": "openevolve"}[fmt]
    task = make_adapted_task(path)
    stem = "initial" if fmt == "shinka" else "initial_program"
    assert task.entry_file == stem + language.extension and task.entry_function == ""
    seed = task.seed_files()
    source = seed[task.entry_file]
    assert check_child(seed, task.entry_file, "", ()) is None
    number, line = estimate_line(source, language)
    assert "0.1" in line and "3.0" in line  # the seed's own estimate, 0.1 x + 3
    broken = {task.entry_file: source.replace(line, language.broken)}
    assert check_child(broken, task.entry_file, "", ()).startswith(f"{task.entry_file}: line {number}, column")
    if language_of(task.entry_file).block_comment:  # Fortran has no block comment to hide a marker in
        swallowed = {task.entry_file: source.replace("// EVOLVE-BLOCK-END", "/* EVOLVE-BLOCK-END */")}
        assert "EVOLVE-BLOCK-END is inside a block comment" in check_child(swallowed, task.entry_file, "", ())


@pytest.mark.parametrize("folder,fmt,language", cases(half=0))
def test_a_search_resumes_and_ends_with_a_final_node_holdout_figures_and_children_that_build(
    tmp_path, folder, fmt, language
):
    """Default sandbox (auto) and workers; a run of 6 dev evaluations, resumed to 10."""
    argv = ["--task", str(FIXTURES / folder), "--budget", "6", "--run-dir", str(tmp_path / "runs"), "--quiet"]
    assert run_from_args(build_parser().parse_args(argv)) == 0
    run = only_run(tmp_path / "runs")
    assert run_from_args(build_parser().parse_args(["--resume", str(run), "--budget", "10", "--quiet"])) == 0
    assert read(run, "SELECT count(*) FROM evaluations WHERE split = 'dev'")[0][0] == 10
    assert read(run, "SELECT status FROM runs")[0][0] == "finished"

    final = read(run, "SELECT node_id FROM events WHERE kind = 'select_final' ORDER BY seq DESC LIMIT 1")[0][0]
    holdout = read(run, f"SELECT status FROM evaluations WHERE split = 'holdout' AND node_id = {final}")
    assert holdout and {s for (s,) in holdout} == {"ok"}, holdout
    entry = make_adapted_task(FIXTURES / folder).entry_file
    with Archive.open(run, read_only=True) as archive:
        valid = [n.id for n in archive.nodes() if n.status == "valid"]
        assert len(valid) > 2
        assert all(syntax_problem(archive.node_files(n)[entry], language_of(entry)) is None for n in valid)
    children = read(run, "SELECT status, coalesce(feedback, '') FROM evaluations WHERE node_id > 0")
    built = [f for s, f in children if s == "ok" and "error:" not in f]
    assert built, children  # at least one child built, ran and was scored
    for status, feedback in children:  # and no child failed for a reason of the setup's
        if status != "ok" or "error:" in feedback:
            assert OWN_FAILURE.search(feedback), (status, feedback)


@pytest.mark.parametrize("folder,fmt,language", cases(half=1))
def test_an_llm_run_fences_the_language_and_replays_to_the_same_tree_at_no_cost(tmp_path, folder, fmt, language):
    """litellm's offline path answers SEARCH/REPLACE blocks on the estimate line; the replay has no mock."""
    entry = make_adapted_task(FIXTURES / folder).entry_file
    asked = []

    def model(name, messages, attempt):
        _, line = estimate_line(messages[-1]["content"], language)
        asked.append(line)
        new = language.line.format(a=f"0.{60 + len(asked)}")
        return f"Change: a slope nearer the data.\n\n{entry}\n<<<<<<< SEARCH\n{line}\n=======\n{new}\n>>>>>>> REPLACE\n"

    argv = [
        "--task",
        str(FIXTURES / folder),
        "--budget",
        "3",
        "--model",
        "openai/gpt-4o-mini",
        "--answer-format",
        "diff",
        "--run-dir",
        str(tmp_path / "llm"),
        "--quiet",
    ]
    assert run_from_args(build_parser().parse_args(argv), llm_mock=model) == 0
    original = only_run(tmp_path / "llm")
    prompt = read(original, "SELECT request::VARCHAR FROM llm_calls ORDER BY id LIMIT 1")[0][0]
    lang = language_of(entry)
    assert f"```{lang.fences[0]}" in prompt and f"{lang.line_comment} EVOLVE-BLOCK-START" in prompt
    assert read(original, "SELECT count(*) FROM nodes WHERE mutator = 'llm' AND status = 'valid'")[0][0] >= 1
    best = read(original, "SELECT max((metrics->>'metric')::DOUBLE) FROM evaluations WHERE split = 'dev'")[0][0]
    assert best > 0.5  # a slope near 0.7 with intercept 1 is close to the hidden line

    replay = ["--replay", str(original), "--run-dir", str(tmp_path / "replayed"), "--quiet"]
    assert run_from_args(build_parser().parse_args(replay)) == 0  # no mock: every answer from the archive
    replayed = only_run(tmp_path / "replayed")
    tree = "SELECT id, parent_id, status, code_hash FROM nodes ORDER BY id"
    assert read(replayed, tree) == read(original, tree)
    assert read(replayed, "SELECT count(*) FROM llm_calls")[0][0] == 0


def test_an_openevolve_config_that_names_the_language_picks_the_program(tmp_path):
    """OpenEvolve's config.yaml `language:` says which program is the candidate when the folder holds several;
    a language the folder holds no program in is refused with what it does hold."""
    pytest.importorskip("yaml", reason="PyYAML is not installed")
    folder = tmp_path / "both"
    shutil.copytree(FIXTURES / "openevolve_rust", folder)
    shutil.copy(FIXTURES / "openevolve_minimize" / "initial_program.py", folder / "initial_program.py")
    assert make_adapted_task(folder).entry_file == "initial_program.rs"  # without the config, .py would win
    config = folder / "config.yaml"
    config.write_text(config.read_text().replace('language: "rust"', 'language: "python"'))
    assert make_adapted_task(folder).entry_file == "initial_program.py"
    config.write_text(config.read_text().replace('language: "python"', 'language: "go"'))
    with pytest.raises(
        ValueError, match="names the language 'go', but the folder holds initial_program.py, initial_program.rs"
    ):
        make_adapted_task(folder)


def test_a_shinka_config_that_names_the_language_picks_the_program(tmp_path):
    """ShinkaEvolve's `evo.language` (shinka.yaml) does the same for `initial.<ext>`."""
    pytest.importorskip("yaml", reason="PyYAML is not installed")
    folder = tmp_path / "both"
    shutil.copytree(FIXTURES / "shinka_go", folder)
    shutil.copy(FIXTURES / "shinka_spread" / "initial.py", folder / "initial.py")
    assert make_adapted_task(folder).entry_file == "initial.py"
    (folder / "shinka.yaml").write_text("evo:\n  language: go\n")
    assert make_adapted_task(folder).entry_file == "initial.go"
