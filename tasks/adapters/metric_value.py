"""The "benchmark prints metric:value" task folder.

Files: `config.py` with literal assignments `TASK_NAME`, `METRIC_NAME`,
`HIGHER_IS_BETTER` (default True) and `PERFECT_SCORE` (optional; the target
of the score map unless `--target` is given); `initial_solution.py`, the
program under evolution; `benchmark.py`, run as `python benchmark.py
<solution path>`, which loads the candidate (from the absolute path in
sys.argv[1], or by `import initial_solution`: the candidate is saved under
that name), measures it and prints a line `<METRIC_NAME>: <number>` (or
`<METRIC_NAME>:<number>`, or with `=`). The last such line of its output is
the metric. A benchmark that prints the metric and exits 0 while its
stderr holds a Python traceback caught a failure: the evaluation is
`failed_in_evaluator` (tasks/adapters/caught.py).
`config.py` is read as data (its literal assignments, through `ast`), never
executed by the engine.

What this format cannot protect against: the benchmark runs beside the
agent's code, in the same sandbox and with the same rights, so a hostile
candidate can print the metric line itself (or replace the benchmark's
functions before they run) and forge its figure. The sandbox still keeps it
from everything outside; use the public/private format when the metric must
not be forgeable.
"""

from __future__ import annotations

import ast
import math
from pathlib import Path

from engine import pyast
from tasks.adapters.caught import python_traceback
from tasks.adapters.folder import FolderTask, folder_files, read_text, short
from tasks.base import Grade, Instance


def read_config(path: Path) -> dict:
    """The literal top-level assignments of config.py (no code runs)."""
    try:
        tree = pyast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as exc:
        raise ValueError(f"{path} does not parse (line {exc.lineno}: {exc.msg})") from None
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                continue
    return out


class MetricValueTask(FolderTask):
    format = "metric:value"
    runner = "metric_value_runner.py"

    def __init__(self, root, instances_path=None, target=None) -> None:
        super().__init__(root, "initial_solution.py", instances_path, target)
        config = read_config(self.root / "config.py")
        name = config.get("METRIC_NAME")
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"{self.root / 'config.py'}: METRIC_NAME must be a non-empty string literal")
        self.metric_name = name.strip()
        self.runner_settings = {"metric_name": self.metric_name}
        self.task_name = str(config.get("TASK_NAME") or self.root.name)
        self.higher_is_better = bool(config.get("HIGHER_IS_BETTER", True))
        perfect = config.get("PERFECT_SCORE")
        if target is None and isinstance(perfect, (int, float)) and not isinstance(perfect, bool):
            self.target = float(perfect)
        way = "higher" if self.higher_is_better else "lower"
        readme = self.root / "README.md"
        self.description = (
            f"{self.task_name}. `python benchmark.py <path of {self.entry_file}>` loads it, "
            f"measures it and prints `{self.metric_name}: <value>`; {way} is better"
            + (f" (perfect: {perfect})" if perfect is not None else "")
            + "."
            + (f"\n\n{read_text(readme)}" if readme.is_file() else "")
        )
        self._files = folder_files(self.root, exclude=(self.entry_file,))

    def grade(self, instance: Instance, answer: bytes) -> Grade:
        data = self.answer_object(answer)
        if isinstance(data, str):
            return Grade(False, {}, data)
        if "error" in data:
            return Grade(False, {}, self.explain_missing(short(data["error"]), str(data.get("error_file") or "")))
        try:
            value = float(data["value"])
        except (KeyError, TypeError, ValueError):  # no value, or not a number
            return Grade(False, {}, f"{self.metric_name}: {short(data.get('value'), 60)!r} is not a number")
        if not math.isfinite(value):
            return Grade(False, {}, f"{self.metric_name} is not finite")
        feedback = f"{self.metric_name}: {value:.6g}"
        stderr = data.get("stderr")
        caught = python_traceback(stderr) if isinstance(stderr, str) else ""
        if caught:  # it printed the metric, but something raised on the way (a fallback value?)
            return self.caught_grade({"metric": value}, feedback, self.explain_missing(caught))
        return Grade(True, {"metric": value}, feedback)
