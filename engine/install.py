"""How Clade was installed, and so the command that adds a missing extra: the one a message names.

Installed as a package (`pip install clade-search`, a wheel in site-packages), an extra is
`pip install 'clade-search[tasks]'`. Run from a clone (the folder holding the `engine` package also holds this
project's pyproject.toml: an editable install, or `python -m` inside it), it is the editable form with the
versions the suite passed with, `pip install -c constraints.txt -e '.[tasks]'`, the clone's path in place of `.`
when the command runs elsewhere.
"""

from __future__ import annotations

import os
from pathlib import Path

DISTRIBUTION = "clade-search"  # the name on PyPI; `clade` there is an unrelated build-analysis tool


def source_checkout() -> Path | None:
    """The clone this code runs from, or None for an installed package."""
    root = Path(__file__).resolve().parents[1]
    try:
        pyproject = (root / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return None
    return root if f'name = "{DISTRIBUTION}"' in pyproject else None


def install_extra(extra: str) -> str:
    """The command that installs `extra` (`tasks`, `viz`, ...) where this Clade is installed."""
    root = source_checkout()
    if root is None:
        return f"pip install '{DISTRIBUTION}[{extra}]'"
    here = Path(os.getcwd()).resolve() == root
    constraints, project = ("constraints.txt", ".") if here else (str(root / "constraints.txt"), str(root))
    return f"pip install -c {constraints} -e '{project}[{extra}]'"
