"""What every adapted task folder shares: files, entry point, the one instance, the anchored score.

An adapted task has one problem: the folder's evaluator measures the whole
program at once. It is the dev instance `task`; the holdout split holds the
same problem again (`task_rerun`), run at the end on the final node and the
seed only, which measures the chosen program afresh (an evaluator or a
program that uses randomness may have been lucky on its one dev run).

The entry point `check_child` keeps is found in the seed program: the last
top-level function defined outside the EVOLVE-BLOCK (the fixed caller that
OpenEvolve's and ShinkaEvolve's examples keep after the block, such as
`run_search`, or a `main`), else the first one inside it; its required
positional parameters must stay. Only the first EVOLVE-BLOCK of a file is
mutable (OpenEvolve asks for exactly one).
"""

from __future__ import annotations

import ast
import json
import math
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from engine import pyast
from engine.errors import UserError
from engine.sandbox.base import SandboxLimits
from tasks.adapters.scoring import anchored_score
from tasks.base import Grade, Instance, Task

MAX_FOLDER_BYTES = 64 * 2**20
SKIPPED_DIRS = {"__pycache__", "runs", "results", "openevolve_output", "node_modules"}
SKIPPED_SUFFIXES = (".pyc", ".duckdb", ".duckdb.wal")
DEFAULT_LIMITS = SandboxLimits(timeout_s=60.0, cpu_s=60, memory_mb=2048, file_size_mb=64, processes=64)
START, END = "EVOLVE-BLOCK-START", "EVOLVE-BLOCK-END"
_MISSING = re.compile(r"(?:ModuleNotFoundError: )?No module named '([^']+)'")


def folder_files(root: Path, exclude: Sequence[str] = (), under: str | None = None) -> dict[str, bytes]:
    """The folder's files by relative path, read once; never `data/private`, hidden files or run outputs."""
    base = root / under if under else root
    out: dict[str, bytes] = {}
    total = 0
    for path in sorted(base.rglob("*")):
        rel = path.relative_to(root)
        parts = rel.parts
        if not path.is_file() or any(p.startswith(".") or p in SKIPPED_DIRS for p in parts):
            continue
        if (
            parts[:2] == ("data", "private")
            or rel.as_posix() in (*exclude, "python")
            or rel.name.endswith(SKIPPED_SUFFIXES)
        ):  # `python`: the folder's interpreter entry, for the engine
            continue
        data = path.read_bytes()
        total += len(data)
        if total > MAX_FOLDER_BYTES:
            raise ValueError(f"{root}: more than {MAX_FOLDER_BYTES // 2**20} MiB of files to copy into each sandbox")
        out[rel.as_posix()] = data
    return out


def _block_lines(lines: list[str]) -> tuple[int, int] | None:
    start = next((k for k, line in enumerate(lines, 1) if line.strip().startswith("#") and START in line), None)
    if start is None:
        return None
    end = next(
        (k for k, line in enumerate(lines, 1) if k > start and line.strip().startswith("#") and END in line), None
    )
    return (start, end) if end is not None else None


def entry_point(source: str, filename: str) -> tuple[str, tuple[str, ...]]:
    """(function name, required positional parameters) of the seed program's entry (module docstring)."""
    try:
        tree = pyast.parse(source, filename=filename)
    except SyntaxError as exc:
        raise ValueError(f"{filename} does not parse (line {exc.lineno}: {exc.msg})") from None
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if not defs:
        raise ValueError(f"{filename} defines no top-level function: Clade needs one as the program's entry point")
    block = _block_lines(source.splitlines())

    def inside(node) -> bool:
        return block is not None and block[0] < node.lineno and (node.end_lineno or node.lineno) < block[1]

    outside = [n for n in defs if not inside(n)]
    func = outside[-1] if outside else defs[0]
    positional = [a.arg for a in func.args.posonlyargs + func.args.args]
    required = positional[: len(positional) - len(func.args.defaults)] if func.args.defaults else positional
    return func.name, tuple(required)


def program_entry(source: str, filename: str) -> tuple[str, tuple[str, ...]]:
    """The entry point `check_child` keeps: a Python program's (entry_point); a program in another language
    has none to keep (its runner calls the whole program), but must parse and have well-placed markers."""
    from engine.lang.registry import language_of

    language = language_of(filename)
    if language is None:
        return entry_point(source, filename)
    from engine.lang.check import source_problem

    problem = source_problem(source, language)
    if problem:
        raise ValueError(f"{filename}: {problem}")
    return "", ()


def read_text(path: Path, limit: int = 6000) -> str:
    text = path.read_text(encoding="utf-8", errors="replace").strip()
    return text if len(text) <= limit else text[:limit] + "\n[...]"


RUNNERS = Path(__file__).resolve().parent / "runners"


class FolderTask(Task):
    """Shared machinery; a format sets the fields and implements `grade` (and `sandbox_files`, `command`
    unless it runs one of `runners/` beside the folder's files: `runner` names it, `runner_settings`
    travels as clade_task.json)."""

    format = ""
    higher_is_better = True
    target: float | None = None
    metric_name = "metric"
    answer_file = "answer.json"
    runner = ""  # a file of runners/, copied into the sandbox as clade_<runner>
    runner_settings: dict = {}
    _files: dict[str, bytes] = {}

    def sandbox_files(self, instance: Instance) -> dict[str, bytes]:
        return {
            **self._files,
            f"clade_{self.runner}": (RUNNERS / self.runner).read_bytes(),
            "clade_task.json": json.dumps(self.runner_settings).encode(),
        }

    def command(self) -> Sequence[str]:
        return [self.python or sys.executable, f"clade_{self.runner}"]

    def explain_missing(self, text: str, file: str = "") -> str:
        """`text` with a "No module named 'X'" in it turned into what to do: which Python lacks X (the
        task's own, or the engine's without --task-python) and how to give it one that holds X. `file`:
        where the import failed (the runner says), to tell the candidate from the evaluator."""
        found = _MISSING.search(text)
        if found is None:
            return text
        who = "the candidate program" if file == self.entry_file else "the task's evaluator"
        if self.python:
            hint = f"{who} imports '{found.group(1)}', which the task's Python ({self.python}) lacks: install it there"
        else:
            hint = (
                f"{who} imports '{found.group(1)}', which the sandbox's Python ({sys.executable}) lacks: "
                "install it in a venv and pass --task-python /path/to/venv/bin/python"
            )
        return text[: found.start()] + hint + text[found.end() :]

    @staticmethod
    def answer_object(answer: bytes) -> dict | str:
        """The runner's answer.json as an object, or why it is not one."""
        try:
            data = json.loads(answer)
        except (ValueError, UnicodeDecodeError):
            return "answer.json is not JSON"
        return data if isinstance(data, dict) else "answer.json must be an object"

    @staticmethod
    def caught_grade(metrics: dict, feedback: str, caught: str) -> Grade:
        """The verdict on an answer whose evaluator caught the candidate's failure (tasks.adapters.caught):
        `failed_in_evaluator`, the evaluator's figures kept, its metric under `failed_metric` so that no raw
        figure (a mean over evaluations, a lower-is-better error of 0) ever reads it."""
        kept = {("failed_metric" if k == "metric" else k): v for k, v in metrics.items()}
        return Grade(True, kept, feedback, caught=caught)

    seedless_ok = False  # a format whose folder may come without its seed program (public/private: --bootstrap)

    def __init__(
        self,
        root: str | Path,
        entry_file: str,
        instances_path: str | None = None,
        target: float | None = None,
        source: str | None = None,
    ) -> None:
        """`source`: the seed program's text when it is not the folder's file `entry_file` (repo mode)."""
        if instances_path:
            raise ValueError("--instances does not apply to a task folder: its evaluator measures the whole program")
        self.root = Path(root).resolve()
        self.name = f"{self.root.name} ({self.format})"
        self.entry_file = entry_file
        seed_path = self.root / entry_file
        if source is None and not seed_path.is_file() and self.seedless_ok:
            self._seed, self.entry_function, self.entry_args = None, "main", ()  # until a seed is adopted
        else:
            self._seed = source if source is not None else seed_path.read_text(encoding="utf-8")
            self.entry_function, self.entry_args = program_entry(self._seed, entry_file)
        self.limits = DEFAULT_LIMITS
        self.target = target

    @property
    def raw_metric(self) -> str:
        return self.metric_name

    @property
    def raw_metric_note(self) -> str:
        way = "higher" if self.higher_is_better else "lower"
        goal = f", target {self.target:g}" if self.target is not None else ""
        return f"{self.metric_name} as the folder's evaluator reports it, {way} is better{goal}"

    @property
    def score_note(self) -> str:
        return "scores map it against the seed's value on the same instance (tasks/adapters/scoring.py)"

    def seed_files(self) -> dict[str, str]:
        if self._seed is None:  # a public/private folder without its seed program (--bootstrap writes one)
            raise UserError(
                f"{self.root} has no {self.entry_file}: write one, or have the meta-agent write it from "
                "data/public/task.md with --bootstrap --model M"
            )
        return {self.entry_file: self._seed}

    @property
    def has_seed(self) -> bool:
        return self._seed is not None

    def adopt_seed(self, source: str) -> None:
        """A seed written for the folder (--bootstrap, or read back from a resumed run's node 0): its entry point."""
        self._seed = source
        self.entry_function, self.entry_args = program_entry(source, self.entry_file)

    def reference_agents(self) -> dict[str, dict[str, str]]:
        return {}

    def hidden_paths(self) -> tuple[str, ...]:
        """Host paths no sandbox may see (bwrap and docker hide them; process cannot): the folder's answers."""
        private = self.root / "data" / "private"
        return (str(private),) if private.exists() else ()

    def instances(self) -> list[Instance]:
        return [
            Instance("task", "dev", {"folder": self.root.name}),
            Instance("task_rerun", "holdout", {"folder": self.root.name}),
        ]

    def score(self, instance: Instance, metrics: Mapping, reference: Mapping | None) -> float:
        m0 = None if reference is None or "metric" not in reference else float(reference["metric"])
        return anchored_score(float(metrics["metric"]), m0, self.higher_is_better, self.target)

    def raw_value(self, metrics: Sequence[Mapping]) -> float | None:
        values = [float(m["metric"]) for m in metrics if "metric" in m]
        return sum(values) / len(values) if values else None


def finite_number(value) -> float | None:
    """`value` as a finite float, or None (bools are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def short(value, limit: int = 300) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
