"""Clade's top-level packages hidden by a module of the user's: a `tasks.py` or a `search/` package in the folder a
notebook or `python -m` starts in is found before the installed one (Python puts that folder first on its
path), and an import deep in the engine would fail on it with a traceback. Checked first, said in one line.

Imports nothing of Clade's: it runs before any of the packages it checks is imported.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

PACKAGES = ("engine", "search", "archive", "tasks")  # the importable names the wheel installs beside `clade`


def hidden_package() -> str | None:
    """One line naming the first of Clade's packages that Python would import from elsewhere, or None."""
    home = Path(__file__).resolve().parents[1]  # the folder holding `clade/` and its siblings
    for name in PACKAGES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        if spec is None or not spec.origin:  # missing (said later, by what needs it) or a bare folder: never first
            continue
        found = Path(spec.origin).resolve()
        if (found.parent if found.name == "__init__.py" else found).parent != home:
            shown = found.parent if found.name == "__init__.py" else found
            return (
                f"{shown} hides Clade's {name!r} package (Python imports the folder it starts in first): "
                "rename it, or start from another folder"
            )
    return None
