"""What a new user meets first: `--help` shows every closed set of values, and a mistake ends in one line,
exit code 2, with the closest name when one is close ("did you mean"), "no such folder" for a missing path."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from engine.config import RunConfig
from engine.front.cli import build_parser, main
from tests.conftest import REPO, small_instances

SETTINGS = [item for _, item in RunConfig.settings()]


def refused(argv: list[str], capsys) -> str:
    """The one line `python -m engine.search ARGV` ends with, after checking it exits with code 2."""
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's refusals exit from the parser
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err.strip()


def help_text() -> str:
    return build_parser().format_help()


@pytest.mark.parametrize("item", [i for i in SETTINGS if i.choices() and not i.meta.metavar], ids=lambda i: i.name)
def test_every_closed_set_of_values_is_shown_in_the_help(item):
    shown = ",".join(repr(c) if "," in c else c for c in item.choices())
    assert f"{item.flag} {{{shown}}}" in help_text()


def test_the_help_shows_the_choices_a_user_asked_about():
    from search import POLICIES
    from search.final import FINAL_RULES

    text = help_text()
    assert "--policy {" + ",".join(POLICIES) + "}" in text
    assert "--final {" + ",".join(FINAL_RULES) + "}" in text
    for expected in (
        "--sandbox {auto,process,bwrap,docker}",
        "--answer-format {auto,diff,rewrite}",
        "--meta-steps {implement,'diagnose,implement'}",
        "--mutator {offline,llm,self,human}",
        "--model-choice {fixed,bandit}",
        "--arena {single,tournament}",
        "--compile-check {auto,on,off}",
        "--executor {local,ray,slurm}",
    ):
        assert expected in text
    assert "--policy NAME" not in text and "--meta-steps STEPS" not in text


def test_the_usage_is_one_line_and_each_flag_is_listed_once_below_it():
    lines = help_text().splitlines()
    assert lines[0] == "usage: python -m engine.search [OPTION ...]" and lines[1] == ""
    listed = [line.split()[0] for line in lines if line.startswith("  --")]
    assert len(listed) == len(set(listed)) and {item.flag for item in SETTINGS} | {"--resume", "--quiet"} <= set(listed)


def test_the_task_help_lists_every_built_in_task_and_so_does_its_error(capsys):
    from tasks import TASKS

    flat = " ".join(help_text().split())
    said = re.search(r"--task TASK benchmark to run: a built-in task \(([^)]*)\)", flat)
    assert said is not None, flat
    assert said.group(1).split(", ") == list(TASKS)
    err = refused(["--task", "nope"], capsys)
    assert "choose one of: " + ", ".join(TASKS) + "," in err


@pytest.mark.parametrize(
    "argv, said",
    [
        (["--policy", "hmg"], "unknown policy 'hmg' (did you mean 'hgm'?); choose one of: hgm, dgm,"),
        (["--policy", "HGM"], "unknown policy 'HGM' (did you mean 'hgm'?)"),
        (["--policy", "opnevolve"], "unknown policy 'opnevolve' (did you mean 'openevolve'?)"),
        (["--task", "binpak"], "unknown task 'binpak' (did you mean 'binpack'?); choose one of: binpack,"),
        (["--task", "circle_pack"], "unknown task 'circle_pack' (did you mean 'circle_packing'?)"),
        (["--sandbox", "dokcer"], "unknown sandbox 'dokcer' (did you mean 'docker'?)"),
        (["--final", "max_men"], "unknown final rule 'max_men' (did you mean 'max_mean'?)"),
        (["--answer-format", "dif"], "must be 'auto', 'diff' or 'rewrite', not 'dif' (did you mean 'diff'?)"),
        (["--mutator", "ofline"], "unknown mutator 'ofline' (did you mean 'offline'?)"),
        (["--compile-check", "of"], "not 'of' (did you mean 'off'?)"),
        (["--buget", "3"], "unknown flag --buget (did you mean --budget?)"),
        (["--buget=3"], "unknown flag --buget (did you mean --budget?)"),
        (["--polcy", "hgm"], "unknown flag --polcy (did you mean --policy?)"),
    ],
)
def test_a_misspelt_name_gets_the_closest_one(argv, said, capsys, tmp_path):
    err = refused([*argv, "--run-dir", str(tmp_path / "runs")], capsys)
    assert said in err
    assert not (tmp_path / "runs").exists()  # refused before anything is made


@pytest.mark.parametrize(
    "argv, said",
    [
        (["--policy", "zzzzzz"], "unknown policy 'zzzzzz'; choose one of:"),
        (["--task", "xyzzy"], "unknown task 'xyzzy'; choose one of:"),
        (["--frobnicate"], "unknown flag --frobnicate (see --help)"),
    ],
)
def test_no_suggestion_when_nothing_is_close(argv, said, capsys, tmp_path):
    err = refused([*argv, "--run-dir", str(tmp_path / "runs")], capsys)
    assert said in err and "did you mean" not in err


@pytest.mark.parametrize("path", ["./no_such_folder", "no/such/folder", "~/no_such_clade_task", "../no_such_folder"])
def test_a_task_path_that_is_not_there_is_no_such_folder(path, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert not os.path.exists(path)
    err = refused(["--task", path, "--run-dir", "runs"], capsys)
    assert err == f"error: no such folder: {path}"
    assert not (tmp_path / "runs").exists()


def test_a_task_path_that_is_a_file_or_not_a_task_folder_says_what_is_wrong(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("hello\n")
    err = refused(["--task", "./notes.txt"], capsys)
    assert "--task ./notes.txt: a file, not a folder" in err
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "initial_program.py").write_text("x = 1\n")
    err = refused(["--task", "./half"], capsys)
    assert "./half: not a task folder Clade can read; expected one of:" in err
    assert "initial_program.py + evaluator.py (openevolve)" in err  # what the folder lacks, format by format


def test_a_task_folder_named_without_a_slash_is_still_a_folder(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mytask").mkdir()
    err = refused(["--task", "mytask"], capsys)
    assert "mytask: not a task folder Clade can read" in err  # read as a folder, not as an unknown name


def test_a_flag_value_is_checked_against_the_same_choices_from_python():
    from engine.errors import UserError

    with pytest.raises(UserError, match=r"^unknown policy 'dmg' \(did you mean 'dgm'\?\)"):
        RunConfig.of(policy="dmg").validate()


def test_the_python_m_command_says_the_same_in_one_line():
    out = subprocess.run(
        [sys.executable, "-m", "engine.search", "--policy", "hmg"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True"),
    )
    assert out.returncode == 2
    assert out.stderr.startswith("error: unknown policy 'hmg' (did you mean 'hgm'?)") and out.stderr.count("\n") == 1


@pytest.mark.slow
@pytest.mark.parametrize("workers, said", [(1, "1 worker,"), (2, "2 workers,")])
def test_the_header_says_worker_or_workers(workers, said, tmp_path):
    instances = small_instances(tmp_path / "instances.json", n_dev=2, n_holdout=1, n_items=30)
    argv = ["--budget", "2", "--workers", str(workers), "--sandbox", "process", "--quiet"]
    out = subprocess.run(
        [sys.executable, "-m", "engine.search", *argv, "--instances", str(instances), "--run-dir", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True"),
    )
    assert out.returncode == 0, out.stderr
    header = next(line for line in out.stdout.splitlines() if line.startswith("Task binpack"))
    assert said in header and "budget 2 dev evaluations" in header
    assert "1 holdout evaluation on top" in out.stdout  # the summary's count, singular too
