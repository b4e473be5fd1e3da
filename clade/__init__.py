"""Clade: tree search over agent variants (HGM, DGM, ADAS and their peers) on a crash-proof DuckDB archive.

    import clade
    run = clade.search(budget=20, quiet=True)      # a search, blocking; returns a Run
    run.nodes()                                    # its nodes as a DataFrame (pandas extra) or an Arrow table

The names below are imported on first use (PEP 562), so `import clade` costs nothing and starts nothing.
"""

from __future__ import annotations

__version__ = "0.3.0"

# public name -> the module that defines it; resolved lazily by __getattr__ below
_EXPORTS: dict[str, str] = {
    # searching and reading runs
    "search": "clade.api",
    "open_run": "clade.api",
    "Run": "clade.run",
    "Node": "clade.run",
    "open_sweep": "clade.sweep",
    "Sweep": "clade.sweep",
    "RunConfig": "engine.config",
    "UserError": "engine.errors",
    # what a user implements: a task, and a mutator that proposes children
    "Task": "tasks.base",
    "CheckedTask": "tasks.base",
    "JudgedTask": "tasks.base",
    "Instance": "tasks.base",
    "Grade": "tasks.base",
    "SandboxLimits": "engine.sandbox.base",
    "Mutator": "engine.mutators.base",
    "SyncMutator": "engine.mutators.base",
    "AsyncMutator": "engine.mutators.base",
    "Proposal": "engine.mutators.base",
    "MutationContext": "engine.mutators.base",
    "MutationError": "engine.mutators.base",
}


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'clade' has no attribute {name!r}")
    from importlib import import_module

    from clade.shadowing import hidden_package

    hidden = hidden_package()  # a user's tasks.py beside the notebook: said before an import fails on it
    if hidden:
        raise ImportError(hidden)

    return getattr(import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
