"""What the repository holds: nothing in it points outside it.

The project grew beside a folder of data sets and tools (../shared, /work/shared on the machine it was
written on). A user's checkout has no such folder, so no tracked file outside tests/ may name it: a
pointer there is a broken link in the docs, a command that cannot run, a script that fails. Tests are
exempt (this one too, which must spell the names it looks for): some use those data sets when present
and skip without them.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUTSIDE = (b"../shared", b"/work/shared")


def _tracked() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    return [name for name in listed.decode().split("\0") if name]


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
    assert "pyproject.toml" in names and len(names) > 100  # git answered, from this checkout
    found = _pointing_outside()
    assert found == set(), f"these files name ../shared or /work/shared: {sorted(found)}"
