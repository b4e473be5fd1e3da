"""Adapters: a task folder written for another engine, run unchanged as a Clade task.

`detect(path)` names the folder's format from the files it holds (or raises a
one-line ValueError saying which files were expected); `make_adapted_task`
builds the task. The formats, first match wins:

| format | files |
| --- | --- |
| `openevolve` | `initial_program.py` + `evaluator.py` (OpenEvolve) |
| `shinkaevolve` | `initial.py` + `evaluate.py` (ShinkaEvolve) |
| `shinkaevolve_repo` | `evaluate.py` + `shinka.yaml` naming `evo.seed_repo_path` (ShinkaEvolve's repo mode) |
| `rubric` | `benchmark.py` + `rubric_checks.json` + `questions.json` + `agent.py` (a judge model grades the answers) |
| `metric_value` | `config.py` + `initial_solution.py` + `benchmark.py` (the benchmark prints `metric: value`) |
| `public_private` | `grade.py` + `data/public/` + `solution.py` (grading outside the sandbox; without solution.py, `--bootstrap` writes it from `data/public/task.md`) |

Unbounded metrics map into [0, 1] by `scoring.anchored_score`, anchored on
the seed's value and an optional target; a rubric task scores in [0, 1]
itself (the weighted share of the checks the judge passed).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from tasks.adapters.folder import FolderTask

FORMATS = {
    "openevolve": ("initial_program.py", "evaluator.py"),
    "shinkaevolve": ("initial.py", "evaluate.py"),
    "rubric": ("benchmark.py", "rubric_checks.json", "questions.json", "agent.py"),
    "metric_value": ("config.py", "initial_solution.py", "benchmark.py"),
    "public_private": ("grade.py", "data/public"),  # solution.py too, or --bootstrap writes it
}


PROGRAM_STEMS = {"openevolve": "initial_program", "shinkaevolve": "initial"}


def program_file(root: Path, stem: str, language: str | None = None) -> str | None:
    """The folder's program: `<stem>.py`, else `<stem>.<ext>` in a language Clade parses (engine/lang).

    `language`: the one the folder's config names (OpenEvolve's `language:`), which picks among several
    programs (`initial_program.py` beside `initial_program.rs`); a ValueError when the folder holds no
    program in it. A language Clade does not know (OpenEvolve's `text`, ...) is left to the extension."""
    from engine.lang.registry import LANGUAGES, language_of

    wanted: tuple[str, ...] | None = None
    if language and language.lower() in ("python", "py"):
        wanted = (".py",)
    elif language and (named := language_of("", named=language)) is not None:
        wanted = named.extensions
    known = (".py", *(ext for lang in LANGUAGES for ext in lang.extensions))
    found = sorted(
        (
            p.name
            for p in root.glob(f"{stem}.*")
            if p.is_file() and p.suffix.lower() in known and p.name[: -len(p.suffix)] == stem
        ),
        key=lambda name: (not name.endswith(".py"), name),
    )
    if wanted is not None:
        chosen = [name for name in found if name[len(stem) :].lower() in wanted]
        if not chosen:
            held = ", ".join(found) or f"no {stem}.<ext>"
            raise ValueError(f"{root}: its config names the language {language!r}, but the folder holds {held}")
        return chosen[0]
    return found[0] if found else None


def detect(path: str | Path) -> str:
    """The format of the task folder at `path`; ValueError (one line) when none fits."""
    root = Path(path)
    if not root.is_dir():
        raise ValueError(f"{path}: not a folder")
    for name, needed in FORMATS.items():
        if all((root / f).exists() for f in needed):
            return name
        stem = PROGRAM_STEMS.get(name)
        if stem and program_file(root, stem) and all((root / f).exists() for f in needed[1:]):
            return name  # a program in another language: initial.cpp, initial_program.rs, ...
    from tasks.adapters.shinka_repo import repo_config

    if repo_config(root) is not None:
        return "shinkaevolve_repo"
    expected = "; ".join(f"{' + '.join(files)} ({name})" for name, files in FORMATS.items())
    expected += "; evaluate.py + shinka.yaml naming evo.seed_repo_path (shinkaevolve_repo)"
    raise ValueError(f"{path}: not a task folder Clade can read; expected one of: {expected}")


class FolderFormat(Protocol):
    """What every format's task class is called with: the folder, --instances and --target."""

    def __call__(
        self, root: str | Path, instances_path: str | None = None, target: float | None = None
    ) -> FolderTask: ...


def make_adapted_task(path: str | Path, instances_path: str | None = None, target: float | None = None) -> FolderTask:
    """The task the folder at `path` describes, in its detected format."""
    fmt = detect(path)
    cls: FolderFormat
    if fmt == "openevolve":
        from tasks.adapters.openevolve import OpenEvolveTask as cls
    elif fmt == "shinkaevolve":
        from tasks.adapters.openevolve import ShinkaEvolveTask as cls
    elif fmt == "shinkaevolve_repo":
        from tasks.adapters.shinka_repo import ShinkaRepoTask as cls
    elif fmt == "rubric":
        from tasks.adapters.rubric import RubricTask as cls
    elif fmt == "metric_value":
        from tasks.adapters.metric_value import MetricValueTask as cls
    else:
        from tasks.adapters.public_private import PublicPrivateTask as cls
    return cls(path, instances_path=instances_path, target=target)
