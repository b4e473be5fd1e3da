"""A module of the user's named like one of Clade's packages (a `tasks.py` beside a notebook) is said in one line,
not met as a traceback deep in the engine."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from clade.shadowing import hidden_package
from tests.conftest import REPO


def _run(args: list[str], cwd) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))  # the checkout after the folder Python starts in, as installed
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("hider", ["tasks.py", "search/__init__.py", "archive.py"])
@pytest.mark.parametrize(
    "command", [["-m", "clade", "search", "--budget", "5"], ["-m", "engine.search", "--budget", "5"]]
)
def test_python_m_names_the_hiding_module_and_exits_2(tmp_path, hider, command):
    (tmp_path / hider).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / hider).write_text("VALUE = 1\n")
    done = _run(command, tmp_path)
    name = hider.split("/")[0].removesuffix(".py")
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"error: {tmp_path / hider.split('/')[0]} hides Clade's {name!r} package (Python imports the folder it "
        "starts in first): rename it, or start from another folder"
    ]
    assert not (tmp_path / "runs").exists()


def test_the_python_api_raises_it_before_any_import_fails(tmp_path):
    (tmp_path / "tasks.py").write_text("def build():\n    pass\n")
    done = _run(["-c", "import clade\ntry:\n    clade.search\nexcept ImportError as exc:\n    print(exc)\n"], tmp_path)
    assert done.returncode == 0 and done.stdout.startswith(f"{tmp_path / 'tasks.py'} hides Clade's 'tasks' package")


def test_a_plain_data_folder_of_that_name_hides_nothing(tmp_path, monkeypatch):
    (tmp_path / "archive").mkdir()  # no __init__.py: a namespace portion, found after the real package
    (tmp_path / "archive" / "notes.txt").write_text("mine")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert hidden_package() is None
    assert _run(["-m", "clade", "--version"], tmp_path).returncode == 0
