"""engine/install.py: a missing extra is named the way this Clade was installed."""

from __future__ import annotations

import tomllib

from engine import install
from tests.conftest import REPO


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
