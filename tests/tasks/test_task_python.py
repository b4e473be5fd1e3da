"""`--task-python`: a task folder's candidate and evaluator run under another venv's interpreter.

The venv is made here (`python -m venv --without-pip`, no system site
packages: it holds nothing of Clade's and no numpy) with a fake `openevolve`
package in its site-packages; the task folder's evaluator imports
`from openevolve.evaluation_result import EvaluationResult`, as OpenEvolve's
examples do, so it can only run under that venv. Each search runs the command
line in this process (`engine.front.cli.main`) with the offline mutator.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from engine.front.cli import main
from engine.sandbox.jobenv import _job_env
from tests.engine.test_search_e2e import only_run, read

EVALUATION_RESULT = """from dataclasses import dataclass, field


@dataclass
class EvaluationResult:
    metrics: dict
    artifacts: dict = field(default_factory=dict)
"""
PROGRAM = '''"""Guess a number near 7 (OpenEvolve format)."""


# EVOLVE-BLOCK-START
def guess(a=2.0, b=1.0):
    return a * 1.5 + b
# EVOLVE-BLOCK-END


def run_search():
    return guess()
'''
EVALUATOR = """import importlib.util

from openevolve.evaluation_result import EvaluationResult


def evaluate(program_path):
    spec = importlib.util.spec_from_file_location("program", program_path)
    program = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(program)
    x = float(program.run_search())
    return EvaluationResult(metrics={"combined_score": 1.0 / (1.0 + abs(x - 7.0))}, artifacts={"x": x})
"""


@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A venv without pip or system site packages, holding a fake `openevolve` and nothing else."""
    root = tmp_path_factory.mktemp("venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    (site,) = root.glob("lib/python3*/site-packages")
    (site / "openevolve").mkdir()
    (site / "openevolve" / "__init__.py").write_text("")
    (site / "openevolve" / "evaluation_result.py").write_text(EVALUATION_RESULT)
    return root


@pytest.fixture
def folder(tmp_path) -> Path:
    task = tmp_path / "guess"
    task.mkdir()
    (task / "initial_program.py").write_text(PROGRAM)
    (task / "evaluator.py").write_text(EVALUATOR)
    return task


@pytest.fixture
def search(capsys, monkeypatch):
    """The command line as a user runs it: what it printed and returned."""
    monkeypatch.setenv("COLUMNS", "250")

    def run(*args: str) -> Ran:
        capsys.readouterr()
        code = main([*args, "--quiet"])
        said = capsys.readouterr()
        return Ran(code, said.out, said.err)

    return run


def statuses(run: Path) -> list[str]:
    return [s for (s,) in read(run, "SELECT status FROM evaluations WHERE split = 'dev' ORDER BY finished_at")]


def stored_python(run: Path) -> str | None:
    import json

    return json.loads(read(run, "SELECT config FROM runs")[0][0]).get("task_python")


def test_without_the_flag_the_seed_fails_naming_the_module_and_the_flag(search, folder, tmp_path):
    out = search("--task", str(folder), "--budget", "4", "--sandbox", "process", "--run-dir", str(tmp_path / "runs"))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    line = out.stderr.strip()
    assert "\n" not in line
    assert "seed (node 0) failed" in line
    assert (
        f"the task's evaluator imports 'openevolve', which the sandbox's Python ({sys.executable}) lacks: "
        "install it in a venv and pass --task-python /path/to/venv/bin/python"
    ) in line
    print(line)


def test_with_the_flag_the_search_runs_under_the_venv(search, folder, venv, tmp_path):
    runs = tmp_path / "runs"
    out = search(
        "--task",
        str(folder),
        "--budget",
        "4",
        "--sandbox",
        "process",
        "--run-dir",
        str(runs),
        "--task-python",
        str(venv / "bin" / "python"),
    )
    assert out.returncode == 0, out.stderr
    assert f"sandbox process, task Python {venv / 'bin' / 'python'}" in out.stdout
    run = only_run(runs)
    assert statuses(run)[0] == "ok" and statuses(run).count("ok") >= 2
    assert stored_python(run) == str(venv / "bin" / "python")


def test_a_venv_folder_stands_for_its_bin_python_and_resume_keeps_it(search, folder, venv, tmp_path):
    runs = tmp_path / "runs"
    out = search(
        "--task",
        str(folder),
        "--budget",
        "2",
        "--sandbox",
        "process",
        "--run-dir",
        str(runs),
        "--task-python",
        str(venv),
    )
    assert out.returncode == 0, out.stderr
    run = only_run(runs)
    assert stored_python(run) == str(venv / "bin" / "python")
    changed = search("--resume", str(run), "--budget", "4", "--task-python", sys.executable)
    assert changed.returncode == 2 and "--task-python cannot change on --resume" in changed.stderr
    out = search("--resume", str(run), "--budget", "4")
    assert out.returncode == 0, out.stderr
    assert f"task Python {venv / 'bin' / 'python'}" in out.stdout
    assert len(statuses(run)) >= 4 and statuses(run)[0] == "ok" and statuses(run).count("ok") >= 2  # went on
    assert stored_python(run) == str(venv / "bin" / "python")


@pytest.mark.bwrap
def test_bwrap_binds_the_venv_and_its_base_python(search, folder, venv, tmp_path):
    from engine.sandbox.bwrap import bwrap_available

    ok, why = bwrap_available()
    if not ok:
        pytest.skip(f"bwrap unusable: {why}")
    runs = tmp_path / "runs"
    out = search(
        "--task",
        str(folder),
        "--budget",
        "4",
        "--sandbox",
        "bwrap",
        "--run-dir",
        str(runs),
        "--task-python",
        str(venv / "bin" / "python"),
    )
    assert out.returncode == 0, out.stderr
    assert "sandbox bwrap, task Python" in out.stdout
    run = only_run(runs)
    assert statuses(run)[0] == "ok" and statuses(run).count("ok") >= 2


def test_the_folder_python_entry_works_like_the_flag(search, folder, venv, tmp_path):
    (folder / "python").write_text(os.path.relpath(venv / "bin" / "python", folder) + "\n")
    runs = tmp_path / "runs"
    out = search("--task", str(folder), "--budget", "4", "--sandbox", "process", "--run-dir", str(runs))
    assert out.returncode == 0, out.stderr
    assert f"task Python {venv / 'bin' / 'python'}" in out.stdout
    run = only_run(runs)
    assert statuses(run)[0] == "ok"
    assert stored_python(run) == str(venv / "bin" / "python")


def test_the_flag_wins_over_the_folder_entry(search, folder, venv, tmp_path):
    (folder / "python").write_text("no/such/venv\n")
    bad = search("--task", str(folder), "--budget", "4", "--sandbox", "process", "--run-dir", str(tmp_path / "a"))
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert f"{folder / 'python'} (the task's Python): {folder / 'no/such/venv'} not found" in bad.stderr
    out = search(
        "--task",
        str(folder),
        "--budget",
        "2",
        "--sandbox",
        "process",
        "--run-dir",
        str(tmp_path / "b"),
        "--task-python",
        str(venv),
    )
    assert out.returncode == 0, out.stderr
    assert statuses(only_run(tmp_path / "b"))[0] == "ok"


def _script(path: Path, body: str) -> str:
    path.write_text(body)
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize("kind", ["missing", "not_a_venv", "not_executable", "not_python", "too_old", "hangs"])
def test_a_bad_interpreter_is_one_line_and_exit_2(search, folder, tmp_path, kind, monkeypatch):
    if kind == "hangs":  # the check's timeout, shortened
        import functools

        import engine.sandbox.interpreter as interpreter

        monkeypatch.setattr(interpreter, "inspect_python", functools.partial(interpreter.inspect_python, timeout=0.5))
    path, said = {
        "missing": (str(tmp_path / "nowhere" / "python"), "not found"),
        "not_a_venv": (str(tmp_path), "is a folder but not a venv: it has no bin/python"),
        "not_executable": (str(folder / "evaluator.py"), "is not an executable file"),
        "not_python": (
            _script(tmp_path / "fake", "#!/bin/sh\necho hello >&2\nexit 3\n"),
            "is not a Python interpreter Clade can use (exit 3: hello)",
        ),
        "too_old": (
            _script(tmp_path / "old", '#!/bin/sh\necho \'{"version": [3, 6], "prefixes": []}\'\n'),
            "is Python 3.6; the sandbox needs Python 3.8 or newer",
        ),
        "hangs": (_script(tmp_path / "slow", "#!/bin/sh\nexec sleep 30\n"), "did not answer within 0.5 s"),
    }[kind]
    started = time.monotonic()
    out = search(
        "--task",
        str(folder),
        "--budget",
        "4",
        "--sandbox",
        "process",
        "--run-dir",
        str(tmp_path / "runs"),
        "--task-python",
        path,
    )
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("error: --task-python: ") and said in out.stderr
    assert not (tmp_path / "runs").exists()  # nothing made
    assert time.monotonic() - started < 15
    print(out.stderr.strip())


def test_docker_refuses_the_flag(search, folder, venv, tmp_path):
    out = search(
        "--task", str(folder), "--sandbox", "docker", "--task-python", str(venv), "--run-dir", str(tmp_path / "runs")
    )
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "--image" in out.stderr


def test_a_shinka_evaluator_missing_its_engine_names_it(search, tmp_path):
    task = tmp_path / "shinka"
    task.mkdir()
    (task / "initial.py").write_text(
        "# EVOLVE-BLOCK-START\ndef f():\n    return 1.0\n# EVOLVE-BLOCK-END\n\n\ndef run():\n    return f()\n"
    )
    (task / "evaluate.py").write_text("from shinka.core import run_shinka_eval\n")
    out = search("--task", str(task), "--budget", "2", "--sandbox", "process", "--run-dir", str(tmp_path / "runs"))
    assert out.returncode == 2 and "\n" not in out.stderr.strip()
    assert "the task's evaluator imports 'shinka', which the sandbox's Python" in out.stderr
    assert "--task-python /path/to/venv/bin/python" in out.stderr


def test_the_task_python_goes_first_on_the_jobs_path(venv):
    python = str(venv / "bin" / "python")
    assert _job_env("/job", python)["PATH"].split(os.pathsep)[0] == str(venv / "bin")
    assert _job_env("/job")["PATH"] == _job_env("/job", None)["PATH"]
