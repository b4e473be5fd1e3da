"""Polyglot's exercises as Clade reads them: `<language>/exercises/practice/<name>/` of Aider's polyglot-benchmark.

An exercise folder holds the instructions (`.docs/instructions.md`, sometimes
`instructions.append.md`), the stub the solver edits, the tests, the track's
build files, and under `.meta/` a reference solution and `config.json`, whose
`files` names the solution files, the test files and the example (reference)
files. What the solver sees is the folder without `.meta/`, `.docs/` and the
track's own tooling; grading puts the candidate's solution files over the
original folder, so only the files `config.json` calls the solution count.

The split (fixed, stratified by language): within each language, exercises in
name order alternate dev, holdout, dev, ... (113 dev and 112 holdout of 225).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path, PurePosixPath

# language -> exercise count at the pinned commit (Aider's selection)
LANGUAGES: dict[str, int] = {"cpp": 26, "go": 39, "java": 47, "javascript": 49, "python": 34, "rust": 30}
LANGUAGE_NAMES = {"cpp": "C++", "go": "Go", "java": "Java", "javascript": "JavaScript", "python": "Python"}
LANGUAGE_NAMES["rust"] = "Rust"
# Never shown to the solver nor copied for grading: the track's tooling, and what only maintainers read.
_LEFT_OUT_DIRS = {".meta", ".docs", ".approaches", ".articles", "gradle", ".github"}
_LEFT_OUT_FILES = {"gradlew", "gradlew.bat", ".eslintrc", ".npmrc", "LICENSE", ".gitignore"}
MAX_FILE_BYTES = 2**20
# Exercises whose solution is a test suite (Go's counter, deprecated by Exercism but in Aider's selection): the
# suite goes in `test_file`, and grading runs it once per implementation the exercise ships, chosen by
# `variable`; it must pass on the correct one and fail on the faulty ones (the exercise's own statement).
SUITES = {
    "go/counter": {"test_file": "counter_test.go", "variable": "COUNTER_IMPL", "right": ["4"], "wrong": ["1", "2", "3"]}
}
# What a solution may add beside the listed solution files: new source files of the language, outside the
# tests and the runners' configuration (a conftest.py, a jest.config.js or a __mocks__ folder would change
# how the tests run).
_NEW_FILES = {
    "python": r"(?!.*(^|/)(conftest|test_[^/]*|[^/]*_test)\.py$)[^/]+\.py",
    "go": r"[^/]+(?<!_test)\.go",
    "rust": r"src/.+\.rs",
    "cpp": r"[^/]+\.(h|hpp)",
    "java": r"src/main/java/.+\.java",
    "javascript": r"(?!.*\.(spec|test|config)\.js$)(?!.*__mocks__)[^/]+\.js",
}


@dataclass(frozen=True)
class Exercise:
    language: str
    name: str
    folder: Path

    @property
    def id(self) -> str:
        return f"{self.language}/{self.name}"

    @cached_property
    def config(self) -> dict:
        return json.loads((self.folder / ".meta" / "config.json").read_text(encoding="utf-8"))

    @property
    def suite(self) -> dict | None:
        """How a test-suite exercise is judged (`SUITES`), None for the others."""
        return SUITES.get(self.id)

    @property
    def solution_files(self) -> tuple[str, ...]:
        listed = tuple(self.config["files"]["solution"])
        return (*listed, self.suite["test_file"]) if self.suite else listed

    @property
    def test_files(self) -> tuple[str, ...]:
        return tuple(self.config["files"]["test"])

    def instructions(self) -> str:
        docs = self.folder / ".docs"
        parts = [docs / "instructions.md", docs / "instructions.append.md"]
        return "\n\n".join(p.read_text(encoding="utf-8").strip() for p in parts if p.is_file()) + "\n"

    def files(self) -> dict[str, str]:
        """The exercise as the solver gets it and grading builds it: {relative path: text} (a copy to change)."""
        return dict(self._shown)

    @cached_property
    def _shown(self) -> dict[str, str]:
        """`files()`, read once: every evaluation reads it twice (its workspace, its grading)."""
        found = {}
        for path in sorted(self.folder.rglob("*")):
            relative = path.relative_to(self.folder)
            if not path.is_file() or relative.parts[0] in _LEFT_OUT_DIRS or relative.name in _LEFT_OUT_FILES:
                continue
            if path.stat().st_size > MAX_FILE_BYTES:
                continue
            found[relative.as_posix()] = path.read_text(encoding="utf-8")
        return found

    def reference(self) -> dict[str, str]:
        """The reference solution as solution files: {solution path: text} (`.meta`'s example in their place)."""
        examples = [PurePosixPath(p) for p in self.config["files"]["example"]]
        solution = [PurePosixPath(p) for p in self.solution_files]
        placed: dict[str, str] = {}
        for example in examples:
            target = PurePosixPath(self.suite["test_file"]) if self.suite else _place(example, solution, self.language)
            placed[str(target)] = (self.folder / example).read_text(encoding="utf-8")
        manifest = self.folder / ".meta" / "Cargo-example.toml"  # Rust: the reference's own crates
        if self.language == "rust" and manifest.is_file():
            placed["Cargo.toml"] = manifest.read_text(encoding="utf-8")
        return placed

    def returned_pattern(self) -> str:
        """The workspace files the runner returns (a regular expression): the solution files and the language's
        source files outside the tests, a superset of what `accepted` takes."""
        listed = "|".join(re.escape(p) for p in self.solution_files)
        return f"(?:{listed})|(?:{_NEW_FILES[self.language]})"

    def accepted(self, answer: dict[str, str]) -> dict[str, str]:
        """The answer's files grading takes: the solution files, and new source files outside the tests."""
        original = self._shown
        pattern = re.compile(_NEW_FILES[self.language])
        return {
            path: text
            for path, text in answer.items()
            if path in self.solution_files or (path not in original and pattern.fullmatch(path) and _safe(path))
        }

    def graded_files(self, answer: dict[str, str]) -> dict[str, str]:
        """What grading runs: the original exercise with the answer's accepted files put in."""
        files = self.files()
        files.update(self.accepted(answer))
        return files


def _safe(path: str) -> bool:
    parts = path.split("/")
    return not path.startswith("/") and "\\" not in path and all(p not in ("", ".", "..") for p in parts)


def _place(example: PurePosixPath, solution: list[PurePosixPath], language: str) -> PurePosixPath:
    """Where a reference file goes: Java's `.meta/src/reference/java/X` -> `src/main/java/X`; otherwise the
    solution file with the same name, else the one with the same suffix."""
    parts = example.parts
    if language == "java" and "reference" in parts:
        return PurePosixPath("src/main", *parts[parts.index("reference") + 1 :])
    for target in solution:
        if target.name == example.name:
            return target
    same = [t for t in solution if t.suffix == example.suffix]
    if len(same) == 1:
        return same[0]
    raise ValueError(f"no solution file for the reference file {example} among {[str(s) for s in solution]}")


def all_exercises(root: Path) -> list[Exercise]:
    """Every exercise under `root`, by language then name."""
    found = []
    for language in LANGUAGES:
        practice = root / language / "exercises" / "practice"
        if practice.is_dir():
            found += [Exercise(language, p.name, p) for p in sorted(practice.iterdir()) if (p / ".meta").is_dir()]
    return found


def split_of(exercises: list[Exercise]) -> dict[str, str]:
    """{exercise id: 'dev' | 'holdout'}: alternating in name order within each language."""
    splits = {}
    for language in LANGUAGES:
        names = sorted(e.name for e in exercises if e.language == language)
        splits.update({f"{language}/{n}": ("dev" if i % 2 == 0 else "holdout") for i, n in enumerate(names)})
    return splits
