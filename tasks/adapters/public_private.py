"""The public/private task folder: the grader and its answers never enter the sandbox.

Files: `data/public/task.md` (the task, shown to the model), the public data
files beside it under `data/public/`, the answers under `data/private/`,
`grade.py` with `grade(submission_path, private_dir) -> float`, and the seed
program `solution.py`. The program runs in a sandbox whose working directory
holds itself and `data/public/` (the same layout as the task folder, so the
seed runs unchanged there too) and nothing else: not `data/private/`, not
`grade.py`; both are also hidden at their host paths (`hidden_paths`), which
the `bwrap` and `docker` sandboxes honour and `process` cannot. It writes its submission, `submission.csv` in the
working directory unless grade.py sets `SUBMISSION_FILE`.

Grading happens OUTSIDE the sandbox, in the engine: grade.py is trusted task
code, imported from the folder with importlib, and called with the
submission the program wrote (copied to a fresh temporary folder) and the
folder's `data/private`. The float it returns is the metric; grade.py may set
`METRIC_NAME` (default "score"), `HIGHER_IS_BETTER` (default True) and
`PERFECT_SCORE` (the score map's target unless `--target` is given). An
exception in grade() makes the answer invalid, with its message as feedback.
A program that exits 0 and writes a submission while its stderr holds a
Python traceback caught its own failure: the evaluation is
`failed_in_evaluator`, as in the metric:value format.
A submission is untrusted input: grade.py should parse it as data (no
pickle, no eval). This is the format where a hostile program cannot forge
its metric: nothing it prints or writes besides the submission is read.
"""

from __future__ import annotations

import importlib.util
import math
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from engine.sandbox.base import SandboxResult
from tasks.adapters.caught import python_traceback
from tasks.adapters.folder import FolderTask, folder_files, read_text, short
from tasks.base import Grade, Instance


def load_grader(path: Path):
    """Import grade.py from its folder (its folder first on sys.path while it loads)."""
    spec = importlib.util.spec_from_file_location(f"clade_grader_{abs(hash(str(path)))}", path)
    assert spec is not None and spec.loader is not None  # a .py file always has one
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # leave the user's folder as it was
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - the task folder's own code: any failure, said in one line
        raise ValueError(f"{path}: importing it failed: {short(f'{type(exc).__name__}: {exc}', 200)}") from None
    finally:
        sys.path.remove(str(path.parent))
        sys.dont_write_bytecode = bytecode
    if not callable(getattr(module, "grade", None)):
        raise ValueError(f"{path}: no function grade(submission_path, private_dir)")  # noqa: TRY004 - callers catch ValueError
    return module


class PublicPrivateTask(FolderTask):
    format = "public/private"
    seedless_ok = True  # without solution.py, --bootstrap has the meta-agent write it from task.md (SIA)

    def __init__(self, root, instances_path=None, target=None) -> None:
        super().__init__(root, "solution.py", instances_path, target)
        self.grader = load_grader(self.root / "grade.py")
        self.answer_file = str(getattr(self.grader, "SUBMISSION_FILE", "submission.csv"))
        self.metric_name = str(getattr(self.grader, "METRIC_NAME", "score"))
        self.higher_is_better = bool(getattr(self.grader, "HIGHER_IS_BETTER", True))
        perfect = getattr(self.grader, "PERFECT_SCORE", None)
        if target is None and isinstance(perfect, (int, float)) and not isinstance(perfect, bool):
            self.target = float(perfect)
        self.private_dir = self.root / "data" / "private"
        self._files = folder_files(self.root, under="data/public")
        public = ", ".join(p for p in self._files if p != "data/public/task.md")
        self.description = (
            read_text(self.root / "data" / "public" / "task.md")
            + f"\n\nThe program {self.entry_file} runs in a folder holding data/public/ ({public}). "
            f"It must write its submission to {self.answer_file} in its working directory."
        )

    def sandbox_files(self, instance: Instance) -> dict[str, bytes]:
        return dict(self._files)

    def hidden_paths(self) -> tuple[str, ...]:
        """The answers and the grader, on the host: bwrap and docker hide them; process cannot (see README)."""
        return (str(self.private_dir), str(self.root / "grade.py"))

    def command(self) -> Sequence[str]:
        return [self.python or sys.executable, self.entry_file]

    def grade(self, instance: Instance, answer: bytes) -> Grade:
        with tempfile.TemporaryDirectory(prefix="clade-submission-") as folder:
            path = Path(folder) / Path(self.answer_file).name
            path.write_bytes(answer)
            try:
                value = self.grader.grade(str(path), str(self.private_dir))
            except Exception as exc:  # noqa: BLE001 - whatever grade() raises, the submission is refused
                return Grade(False, {}, f"grade.py refused the submission: {short(f'{type(exc).__name__}: {exc}')}")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(float(value)):
            return Grade(False, {}, f"grade.py returned {short(value, 60)!r}, not a finite number")
        return Grade(True, {"metric": float(value)}, f"{self.metric_name}: {float(value):.6g}")

    def caught_in_output(self, grade: Grade, result: SandboxResult) -> Grade:
        """grade.py has no channel for an error but raising (a refused submission); the metric:value rule
        instead: a program that wrote its submission and exited 0 with a Python traceback on its stderr
        caught its own failure (a fallback submission), and the evaluation is `failed_in_evaluator`."""
        caught = python_traceback(result.stderr_tail)
        return self.caught_grade(grade.metrics, grade.feedback, caught) if caught else grade
