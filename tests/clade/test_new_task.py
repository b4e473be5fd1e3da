"""`clade new-task`: the folders it writes run as written, their seeds leave room, and nothing is overwritten."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from clade.new_task import FORMATS, TOOLS, extension, languages, rendered
from engine.lang.registry import LANGUAGES
from tasks.adapters import detect
from tests.clade.test_command import clade
from tests.engine.test_search_e2e import only_run, read

ADAPTER_FORMAT = {  # new-task's format name -> the name tasks/adapters.detect gives the folder
    "openevolve": "openevolve",
    "shinka": "shinkaevolve",
    "metric_value": "metric_value",
    "public_private": "public_private",
}
COMPILED = [lang.name for lang in LANGUAGES]


def new_task(folder: Path, fmt: str, language: str = "python") -> subprocess.CompletedProcess:
    return clade("new-task", folder.name, "--format", fmt, "--language", language, cwd=folder.parent)


def python(code: str, cwd: Path) -> str:
    """Run `code` in a fresh interpreter in the task folder (as the other engine would run its evaluator)."""
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def measure(folder: Path, fmt: str, program: str) -> float:
    """The seed's (or a variant's) metric, by the folder's own evaluator, higher is better."""
    if fmt == "openevolve":
        out = python(f"import json, evaluator; print(json.dumps(evaluator.evaluate({program!r})))", folder)
        metrics = json.loads(out)
        assert "error" not in metrics, metrics
        return metrics["combined_score"]
    if fmt == "shinka":
        results = folder / "results"
        python(
            f"import sys, evaluate; sys.argv[1:] = ['--program_path', {program!r}, '--results_dir', "
            f"{str(results)!r}]; evaluate.main()",
            folder,
        )
        correct = json.loads((results / "correct.json").read_text())
        assert correct["correct"] is True, correct
        return json.loads((results / "metrics.json").read_text())["combined_score"]
    if fmt == "metric_value":
        out = subprocess.run(
            [sys.executable, "benchmark.py", program], cwd=folder, capture_output=True, text=True, timeout=60
        )
        assert out.returncode == 0, out.stderr
        return -float(out.stdout.strip().splitlines()[-1].split(":")[1])  # error: lower is better
    subprocess.run([sys.executable, program], cwd=folder, check=True, timeout=60)
    return float(python("import grade; print(grade.grade('submission.csv', 'data/private'))", folder))


# a known better program for each format: a change a user (or a model) could make to the seed
BETTER = {
    "openevolve": ("return start - loss_per_minute * t", "return 22.0 + 68.0 * 2.718281828 ** (-0.08 * t)"),
    "shinka": ("radius = 0.15", "radius = 0.1666"),
    "metric_value": ("weights = [0.166667, 0.333333, 0.333333, 0.166667]", "weights = [0.125, 0.375, 0.375, 0.125]"),
    "public_private": ("bias = 0.0", "bias = 3.0"),
}
PROGRAM = {
    "openevolve": "initial_program.py",
    "shinka": "initial.py",
    "metric_value": "initial_solution.py",
    "public_private": "solution.py",
}


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_folder_is_the_format_it_says_and_the_listing_names_every_file(tmp_path, fmt):
    folder = tmp_path / "my-task"
    done = new_task(folder, fmt)
    assert done.returncode == 0, done.stderr
    assert detect(folder) == ADAPTER_FORMAT[fmt]
    written = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert written == sorted(rendered(FORMATS[fmt], "python"))
    for name in written:
        assert f"my-task/{name}" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == "Next: clade search --task my-task --budget 10"


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_seed_runs_and_a_better_program_scores_higher(tmp_path, fmt):
    folder = tmp_path / "task"
    assert new_task(folder, fmt).returncode == 0
    seed = measure(folder, fmt, PROGRAM[fmt])
    old, new = BETTER[fmt]
    text = (folder / PROGRAM[fmt]).read_text()
    assert text.count(old) == 1
    (folder / "better.py").write_text(text.replace(old, new))
    if fmt == "public_private":  # its program is run by name: swap it in
        shutil.copy(folder / "better.py", folder / PROGRAM[fmt])
        better = measure(folder, fmt, PROGRAM[fmt])
    else:
        better = measure(folder, fmt, "better.py")
    assert better > seed, (seed, better)


@pytest.mark.parametrize("fmt", [f for f in FORMATS if FORMATS[f].program])
def test_every_language_clade_parses_has_a_seed(fmt):
    """OpenEvolve and ShinkaEvolve folders take each language engine/lang knows: each has its program."""
    assert set(languages(FORMATS[fmt])) == {"python", *COMPILED}
    for language in languages(FORMATS[fmt]):
        files = rendered(FORMATS[fmt], language)
        program = FORMATS[fmt].program + extension(language)
        assert next(iter(files)) == program
        assert "EVOLVE-BLOCK-START" in files[program] and "EVOLVE-BLOCK-END" in files[program]
        for name, text in files.items():
            assert "@@" not in text, (name, text[:200])
            if name.endswith(".py"):
                compile(text, name, "exec")


@pytest.mark.parametrize("fmt", [f for f in FORMATS if FORMATS[f].program])
@pytest.mark.parametrize("language", LANGUAGES, ids=lambda lang: lang.name)
def test_each_seed_parses_and_marks_its_block_for_clade(fmt, language):
    """What the offline mutator and the check before a sandbox need (engine/lang): a clean parse, one region."""
    pytest.importorskip("tree_sitter")
    pytest.importorskip(language.grammar)
    from engine.lang.markers import evolve_region
    from engine.lang.syntax import syntax_problem

    source = rendered(FORMATS[fmt], language.name)[FORMATS[fmt].program + extension(language.name)]
    assert syntax_problem(source, language) is None
    region = evolve_region(source, language)
    assert region is not None and region.end_line - region.start_line > 2


@pytest.mark.slow
@pytest.mark.parametrize(("fmt", "language"), [(f, lang) for f in FORMATS if FORMATS[f].program for lang in COMPILED])
def test_a_compiled_seed_scores_as_the_python_one(tmp_path, fmt, language):
    """The seed is the same program in every language: the evaluator gives it the Python seed's score."""
    if language not in TOOLS or shutil.which(TOOLS[language]) is None:
        pytest.skip(f"{TOOLS.get(language, language)} is not installed")
    reference, folder = tmp_path / "py", tmp_path / language
    assert new_task(reference, fmt).returncode == 0
    done = new_task(folder, fmt, language)
    assert done.returncode == 0, done.stderr
    assert detect(folder) == ADAPTER_FORMAT[fmt]
    program = FORMATS[fmt].program + extension(language)
    assert measure(folder, fmt, program) == pytest.approx(measure(reference, fmt, PROGRAM[fmt]), rel=1e-6)


def test_a_folder_that_is_not_empty_is_refused_and_left_alone(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "evaluator.py").write_text("precious\n")
    done = new_task(folder, "openevolve")
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "not empty" in done.stderr
    assert [p.name for p in folder.iterdir()] == ["evaluator.py"]
    assert (folder / "evaluator.py").read_text() == "precious\n"


def test_a_file_in_the_way_is_refused(tmp_path):
    (tmp_path / "taken").write_text("a file\n")
    done = new_task(tmp_path / "taken", "shinka")
    assert done.returncode == 2 and "not a folder" in done.stderr
    assert (tmp_path / "taken").read_text() == "a file\n"


def test_an_empty_folder_is_filled(tmp_path):
    (tmp_path / "empty").mkdir()
    assert new_task(tmp_path / "empty", "metric_value").returncode == 0
    assert detect(tmp_path / "empty") == "metric_value"


@pytest.mark.parametrize("fmt", ["metric_value", "public_private"])
def test_a_language_the_format_does_not_take_is_refused_with_the_ones_it_does(tmp_path, fmt):
    done = new_task(tmp_path / "t", fmt, "cpp")
    assert done.returncode == 2
    assert done.stderr.strip() == f"error: --format {fmt} takes --language python (not cpp)"
    assert not (tmp_path / "t").exists()


def test_a_format_that_does_not_exist_is_one_line(tmp_path):
    done = clade("new-task", "t", "--format", "alphaevolve", cwd=tmp_path)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "openevolve" in done.stderr and not (tmp_path / "t").exists()


def searched(folder: Path) -> None:
    """`clade new-task ... && clade search --task DIR --budget 10` from another folder: exit 0, the seed valid."""
    elsewhere = folder.parent / "elsewhere"
    elsewhere.mkdir()
    done = clade("search", "--task", str(folder), "--budget", "10", "--quiet", cwd=elsewhere, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    run = only_run(elsewhere / "runs")
    assert read(run, "SELECT count(*) FROM evaluations WHERE split = 'dev'")[0][0] == 10
    statuses = {s for (s,) in read(run, "SELECT status FROM evaluations WHERE node_id = 0")}
    assert statuses == {"ok"}, statuses


@pytest.mark.slow
@pytest.mark.parametrize("fmt", FORMATS)
def test_new_task_then_search_runs_as_written(tmp_path, fmt):
    folder = tmp_path / "task"
    assert new_task(folder, fmt).returncode == 0
    searched(folder)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed (Debian: g++)")
@pytest.mark.parametrize("fmt", ["openevolve", "shinka"])
def test_new_task_in_cpp_then_search_runs_as_written(tmp_path, fmt):
    folder = tmp_path / "task"
    assert new_task(folder, fmt, "cpp").returncode == 0
    searched(folder)
