"""Run files as a user meets them: `clade search --print-config`, `--config FILE` with flags over it,
`clade runs show RUN --config` repeating a run, and one-line refusals (exit 2, no run folder made)."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from archive import Archive
from tests.conftest import REPO, small_instances

# what keeps a test's search small and quick here (flags, so a test's run file may still set them)
QUICK = ("--sandbox", "process", "--workers", "1", "--time-limit", "60", "--live-interval", "0", "--quiet")


def clade(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="200", LITELLM_LOCAL_MODEL_COST_MAP="True")
    return subprocess.run(
        [sys.executable, "-m", "clade", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def refused(out: subprocess.CompletedProcess) -> str:
    """The one line of a refusal (exit 2, nothing on stdout, no traceback)."""
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr)
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), out.stderr
    return lines[0]


def stored_config(run_dir: Path) -> tuple[Path, dict]:
    """The one run under `run_dir`, and its stored configuration (runs.config)."""
    (run,) = [p for p in run_dir.iterdir() if (p / "archive.duckdb").is_file()]
    with Archive.open(run, read_only=True) as archive:
        return run, archive.config()


def test_print_config_is_toml_of_the_effective_configuration_and_makes_no_run(tmp_path):
    (tmp_path / "base.toml").write_text('[search]\npolicy = "greedy"\nbudget = 30\n\n[output]\nlive_interval = 5\n')
    out = clade(tmp_path, "search", "--config", "base.toml", "--budget", "20", "--print-config")
    assert out.returncode == 0, out.stderr
    printed = tomllib.loads(out.stdout)
    assert printed["search"]["budget"] == 20  # the flag over the file
    assert printed["search"]["policy"] == "greedy"  # the file over the default
    assert printed["output"]["live_interval"] == 5.0
    assert printed["search"]["seed"] == 0  # the default where neither says
    assert list(printed) == ["search", "evaluation", "llm", "improvement", "benchmark", "output"]
    assert "target" not in printed["search"]  # None: left out
    assert not (tmp_path / "runs").exists()


@pytest.mark.slow
def test_print_config_then_config_with_a_flag_runs(tmp_path):
    small_instances(tmp_path / "instances.json")
    printed = clade(tmp_path, "search", "--print-config", "--instances", "instances.json")
    assert printed.returncode == 0, printed.stderr
    (tmp_path / "run.toml").write_text(printed.stdout)
    out = clade(tmp_path, "search", "--config", "run.toml", "--budget", "20", *QUICK)
    assert out.returncode == 0, out.stderr
    _, config = stored_config(tmp_path / "runs")
    assert config["budget"] == 20
    assert config["instances"] == str((tmp_path / "instances.json").resolve())
    assert config["policy"] == "hgm" and config["seed"] == 0


@pytest.mark.slow
def test_runs_show_config_repeats_the_run(tmp_path):
    small_instances(tmp_path / "instances.json")
    flags = ("--policy", "greedy", "--seed", "3", "--budget", "8", "--stages", "none", "--max-failed-expansions", "5")
    first = clade(tmp_path, "search", *flags, "--instances", "instances.json", "--run-dir", "first", *QUICK)
    assert first.returncode == 0, first.stderr
    run, config = stored_config(tmp_path / "first")
    shown = clade(tmp_path, "runs", "show", str(run), "--config")
    assert shown.returncode == 0, shown.stderr
    # the second run goes to its own folder: the only key that differs, and the one flag given over the file
    (tmp_path / "again.toml").write_text(shown.stdout)
    second = clade(tmp_path, "search", "--config", "again.toml", "--run-dir", "second", "--quiet")
    assert second.returncode == 0, second.stderr
    _, repeated = stored_config(tmp_path / "second")
    assert repeated["run_dir"] == "second" and config["run_dir"] == "first"
    assert set(repeated) == set(config)
    for key in config:
        if key != "run_dir":
            assert repeated[key] == config[key], key
    assert config["policy"] == "greedy" and config["seed"] == 3 and config["max_failed_expansions"] == 5


@pytest.mark.parametrize(
    "text, said",
    [
        ("[search]\nbudgt = 20\n", "[search] budgt is not a setting (did you mean budget?)"),
        ('[search]\nbudget = "x"\n', "[search] budget must be a whole number, not 'x'"),
        ("[search]\nworkers = -1\n", "[search] workers = -1: --workers must be 1 or more"),
        ('[search]\npolicy = "nope"\n', "[search] policy = \"nope\": unknown policy 'nope'; choose one of:"),
        ("[serch]\nbudget = 20\n", "unknown section [serch] (did you mean [search]?)"),
        ("[search]\nbudget = \n", "not valid TOML"),
    ],
)
def test_a_bad_run_file_is_one_line_and_no_run(tmp_path, text, said):
    (tmp_path / "run.toml").write_text(text)
    line = refused(clade(tmp_path, "search", "--config", "run.toml", "--run-dir", "out"))
    assert line.startswith("error: run.toml: ") and said in line
    assert not (tmp_path / "out").exists()
    assert (tmp_path / "run.toml").read_text() == text  # the user's file as it was


def test_a_missing_run_file_is_one_line(tmp_path):
    line = refused(clade(tmp_path, "search", "--config", "absent.toml", "--run-dir", "out"))
    assert "absent.toml: no such run file" in line
    assert not (tmp_path / "out").exists()


def test_a_flag_mends_a_bad_value_of_the_file(tmp_path):
    (tmp_path / "run.toml").write_text("[search]\nbudget = 0\n")
    out = clade(tmp_path, "search", "--config", "run.toml", "--budget", "12", "--print-config")
    assert out.returncode == 0, out.stderr
    assert tomllib.loads(out.stdout)["search"]["budget"] == 12


@pytest.mark.parametrize(
    "how, said",
    [
        (("--resume", "runs/old"), "run.toml: [search] seed cannot be set with --resume: the run keeps its own"),
        (("--resume-from", "snap"), "run.toml: [search] seed cannot be set with --resume-from"),
        (("--replay", "runs/old"), "run.toml: [search] seed cannot be set with --replay"),
    ],
)
def test_a_setting_the_run_keeps_is_refused_in_the_file_as_its_flag_is(tmp_path, how, said):
    (tmp_path / "run.toml").write_text("[search]\nbudget = 30\nseed = 4\n")
    line = refused(clade(tmp_path, "search", "--config", "run.toml", *how))
    assert said in line and "may set only: " in line


@pytest.mark.slow
def test_a_run_file_with_what_a_resume_may_change_resumes(tmp_path):
    small_instances(tmp_path / "instances.json")
    first = clade(tmp_path, "search", "--policy", "greedy", "--budget", "8", "--instances", "instances.json", *QUICK)
    assert first.returncode == 0, first.stderr
    run, _ = stored_config(tmp_path / "runs")
    (tmp_path / "more.toml").write_text("[search]\nbudget = 16\n")
    out = clade(tmp_path, "search", "--resume", str(run), "--config", "more.toml", "--quiet")
    assert out.returncode == 0, out.stderr
    _, config = stored_config(tmp_path / "runs")
    assert config["budget"] == 16
    with Archive.open(run, read_only=True) as archive:
        assert len(archive.evaluations("dev")) > 8  # the resume spent the raised budget


def test_print_config_refuses_a_stored_run(tmp_path):
    line = refused(clade(tmp_path, "search", "--print-config", "--resume", "runs/old"))
    assert "clade runs show RUN --config" in line


def test_runs_show_config_of_no_run_is_one_line(tmp_path):
    line = refused(clade(tmp_path, "runs", "show", "nope", "--config"))
    assert "no run 'nope'" in line
