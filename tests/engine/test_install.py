"""engine/install.py: a missing extra is named the way this Clade was installed."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib

import pytest

from engine import install
from tests.conftest import REPO, small_instances


def test_the_distribution_name_is_pyprojects():
    assert tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["name"] == install.DISTRIBUTION


def test_in_the_clone_the_editable_form_with_the_constraints(monkeypatch):
    assert install.source_checkout() == REPO
    monkeypatch.chdir(REPO)
    assert install.install_extra("tasks") == "pip install -c constraints.txt -e '.[tasks]'"


def test_from_another_folder_the_clone_is_named_by_its_path(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert install.install_extra("viz") == f"pip install -c {REPO}/constraints.txt -e '{REPO}[viz]'"


def test_an_installed_package_names_the_distribution(monkeypatch, tmp_path):
    # site-packages holds the packages and no pyproject.toml: what a wheel's install looks like
    fake = tmp_path / "site-packages" / "engine" / "install.py"
    fake.parent.mkdir(parents=True)
    monkeypatch.setattr(install, "__file__", str(fake))
    assert install.source_checkout() is None
    assert install.install_extra("tasks") == "pip install 'clade-search[tasks]'"


def test_another_projects_pyproject_beside_the_packages_is_not_a_clone(monkeypatch, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "someone-else"\n')
    fake = tmp_path / "engine" / "install.py"
    fake.parent.mkdir()
    monkeypatch.setattr(install, "__file__", str(fake))
    assert install.source_checkout() is None


@pytest.mark.slow
def test_the_search_header_keeps_an_extras_brackets(tmp_path):
    """rich reads `[docker]` as markup and drops it: the header escapes every text it did not write itself."""
    instances = small_instances(tmp_path / "instances.json")
    code = (
        "import sys\n"
        "sys.modules['docker'] = None  # the docker SDK absent: auto's reason names the extra\n"
        "from clade.cli import main\n"
        f"sys.exit(main(['search', '--budget', '2', '--workers', '1', '--instances', {str(instances)!r}]))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(REPO), CLADE_AUTO_SANDBOXES="docker,bwrap,process", COLUMNS="300")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    header = done.stdout.splitlines()[1]
    wanted = f"no docker: the docker SDK is not installed (pip install -c {REPO}/constraints.txt -e '{REPO}[docker]')"
    assert wanted in header, header  # the command from another folder than the clone names the clone


def test_a_model_without_litellm_is_one_line_naming_the_extra(monkeypatch):
    from engine.llm.preflight import check_models

    monkeypatch.setitem(sys.modules, "litellm", None)  # not installed, as in a wheel without the llm extra
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # the key is there: only litellm is missing
    monkeypatch.chdir(REPO)
    assert check_models(["openai/gpt-4o-mini"], None) == (
        "a model is called through litellm, which is not installed: pip install -c constraints.txt -e '.[llm]'"
    )
    assert check_models([], None) is None  # no model, no need


def test_loading_litellm_where_it_is_missing_raises_the_same_line(monkeypatch):
    from engine.errors import UserError
    from engine.llm.provider import load_litellm

    monkeypatch.setitem(sys.modules, "litellm", None)
    with pytest.raises(UserError, match=r"litellm, which is not installed: pip install .*\[llm\]"):
        load_litellm()
