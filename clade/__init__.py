"""Clade: tree search over agent variants (HGM, DGM, ADAS and their peers) on a crash-proof DuckDB archive.

    import clade
    run = clade.search(budget=20, quiet=True)      # a search, blocking; returns a Run
    run.nodes()                                    # its nodes as a DataFrame (pandas extra) or an Arrow table

The names below are imported on first use (PEP 562), so `import clade` costs nothing and starts nothing.
"""

from __future__ import annotations

__version__ = "0.2.0"

# public name -> the module that defines it; resolved lazily by __getattr__ below
_EXPORTS: dict[str, str] = {}


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'clade' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
