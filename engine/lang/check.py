"""A child in another language is admitted when it parses and its EVOLVE-BLOCK markers are well placed.

`check_child` (engine/mutators/validate.py) sends files whose entry file is
in a known language here instead of compiling Python. GrammarMissing (the
`languages` extra absent) is itself the reason: a child that cannot be
checked is not evaluated blind.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.lang.markers import MarkerError, evolve_region
from engine.lang.registry import Language, language_of
from engine.lang.syntax import GrammarMissing, syntax_problem

MAX_SOURCE_CHARS = 400_000


def source_problem(source: str, language: Language) -> str | None:
    """Why `source` is not an admissible `language` program (one line), or None."""
    if len(source) > MAX_SOURCE_CHARS:
        return f"too large ({len(source)} characters > {MAX_SOURCE_CHARS})"
    try:
        problem = syntax_problem(source, language)
        if problem:
            return problem
        evolve_region(source, language)
    except GrammarMissing as exc:
        return f"cannot check {language.name} syntax: {exc}"
    except MarkerError as exc:
        return str(exc)
    return None


def child_problem(files: Mapping[str, str], entry_file: str) -> str | None:
    """check_child for a program in another language: every file of a known language must be admissible."""
    if entry_file not in files:
        return f"entry file {entry_file} missing"
    for path in sorted(files):
        language = language_of(path)
        if language is not None:
            problem = source_problem(files[path], language)
            if problem:
                return f"{path}: {problem}"
    return None
