"""constraints.txt: the pinned versions the suite runs with (README Quickstart, .ci/run).

It parses as a constraints file, pins every direct requirement of pyproject.toml (every extra) within
pyproject's own bounds, and the packages whose new releases broke or may break us (duckdb 2 removed
relations' fetchone(); litellm 1.110 changed error classes and costs) are installed here at exactly the
pinned versions. scripts/check_latest.sh runs the suite on the newest releases instead and sets
CLADE_UNPINNED=1, which skips that last check.
"""

from __future__ import annotations

import os
import re
import tomllib
from importlib import metadata

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.conftest import REPO

CONSTRAINTS = REPO / "constraints.txt"
PIN = re.compile(r"^([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)==([0-9A-Za-z.!+_-]+)$")
# installed == pinned is checked for these: the storage, the model client, and what most code touches
CHECKED = ("duckdb", "litellm", "numpy", "ray", "rich")
INSTALL = 'python3 -m pip install -c constraints.txt -e ".[dev,ray,viz,browser,tasks]"'


def read_pins() -> dict[str, str]:
    pins: dict[str, str] = {}
    for number, raw in enumerate(CONSTRAINTS.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = PIN.match(line)
        assert match, f"constraints.txt:{number}: {raw!r} is neither `name==version` nor a comment"
        name, version = canonicalize_name(match[1]), match[2]
        Version(version)  # a valid version
        assert name not in pins, f"constraints.txt:{number}: {match[1]} is pinned twice"
        pins[name] = version
    return pins


def direct_requirements() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    specs = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        specs += extra
    return [Requirement(spec) for spec in specs]


def test_constraints_parse():
    pins = read_pins()
    assert len(pins) > 20, "constraints.txt pins too few distributions: is it the whole install?"
    assert "clade-search" not in pins, "constraints.txt must not pin clade-search itself"


def test_constraints_pin_duckdb_and_litellm():
    pins = read_pins()
    assert "duckdb" in pins and "litellm" in pins


def test_constraints_pin_every_direct_requirement_within_its_bounds():
    pins = read_pins()
    missing = sorted({str(r.name) for r in direct_requirements() if canonicalize_name(r.name) not in pins})
    assert not missing, f"constraints.txt pins none of {missing}, which pyproject.toml requires"
    outside = [
        f"{r} (pinned {pins[canonicalize_name(r.name)]})"
        for r in direct_requirements()
        if not r.specifier.contains(pins[canonicalize_name(r.name)], prereleases=True)
    ]
    assert not outside, f"constraints.txt pins versions pyproject.toml excludes: {outside}"


@pytest.mark.parametrize("name", CHECKED)
def test_installed_version_is_the_pinned_one(name):
    if os.environ.get("CLADE_UNPINNED"):
        pytest.skip("CLADE_UNPINNED is set (scripts/check_latest.sh: the newest releases on purpose)")
    try:
        installed = metadata.version(name)
    except metadata.PackageNotFoundError:
        pytest.skip(f"{name} is not installed (its extra was not asked for)")
    pinned = read_pins()[canonicalize_name(name)]
    assert installed == pinned, (
        f"{name} {installed} is installed, but constraints.txt pins {pinned}, the version the suite is "
        f"known to pass with: install with the constraints, `{INSTALL}`"
    )
