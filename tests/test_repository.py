"""What the repository holds: nothing in it points outside it.

The project grew beside a folder of data sets and tools (../shared, /work/shared on the machine it was
written on). A user's checkout has no such folder, so no tracked file outside tests/ may name it: a
pointer there is a broken link in the docs, a command that cannot run, a script that fails. Tests are
exempt (this one too, which must spell the names it looks for): some use those data sets when present
and skip without them.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
OUTSIDE = (b"../shared", b"/work/shared")


def _tracked() -> list[str]:
    """The repository's files: git's list in a checkout; in a copy without .git (a zip, the sdist), every file
    but what .gitignore leaves out (runs/, caches, builds)."""
    if (REPO / ".git").exists() and shutil.which("git"):
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
        return [name for name in listed.decode().split("\0") if name]
    return _walked(REPO, _ignored_patterns())


def _ignored_patterns() -> list[str]:
    try:
        lines = (REPO / ".gitignore").read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def _ignored(relative: str, name: str, patterns: list[str]) -> bool:
    for pattern in patterns:
        bare = pattern.rstrip("/")
        if bare.startswith("/"):  # anchored at the top: /runs/
            if fnmatch.fnmatch(relative, bare[1:]):
                return True
        elif fnmatch.fnmatch(name, bare):
            return True
    return False


def _walked(root: Path, patterns: list[str]) -> list[str]:
    found = []
    for folder, dirs, files in os.walk(root):
        here = Path(folder).relative_to(root).as_posix()
        prefix = "" if here == "." else here + "/"
        dirs[:] = [d for d in dirs if d != ".git" and not _ignored(prefix + d, d, patterns)]
        found += [prefix + f for f in files if not _ignored(prefix + f, f, patterns)]
    return found


def _pointing_outside() -> set[str]:
    found = set()
    for name in _tracked():
        path = REPO / name
        if name.startswith("tests/") or not path.is_file():  # tests are exempt; a file deleted, not yet staged
            continue
        content = path.read_bytes()
        if any(needle in content for needle in OUTSIDE):
            found.add(name)
    return found


def test_no_file_outside_tests_points_to_the_shared_folder():
    names = _tracked()
    assert "pyproject.toml" in names and len(names) > 100  # the checkout's files were found
    found = _pointing_outside()
    assert found == set(), f"these files name ../shared or /work/shared: {sorted(found)}"


def test_a_copy_without_git_lists_the_same_files(tmp_path):
    """From a zip or the sdist: the walk over the tree, .gitignore applied, finds what git lists (runs/ and
    caches left behind by searches and tests aside)."""
    if not ((REPO / ".git").exists() and shutil.which("git")):
        pytest.skip("this copy has no .git (or no git): the test above listed its files by the walk")
    listed = subprocess.run(["git", "ls-files", "-z", "--others", "--ignored", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=True).stdout  # fmt: skip
    ignored = {n for n in listed.decode().split("\0") if n}
    walked = set(_walked(REPO, _ignored_patterns()))
    assert walked & ignored == set(), sorted(walked & ignored)[:10]
    assert set(_tracked()) <= walked
