"""What the Polyglot tests share: the published exercises in ../shared (skipped without them), and a scripted model.

The model plays the coding agent on an exercise (its statement's first line names it): it writes the
reference solution's files with `create`, one a step, then finishes; on a `flaky` exercise its first action
is an edit whose search text the stub does not hold (the seed agent gives up on a failed edit; an agent
that retries is told, and the model then writes the files). `empty` exercises get a finish at once (the
stub stays). Everything else (the agent on its own code, the overseer, DGM's diagnosis) is
tests/engine/coding_model.py's.
"""

from __future__ import annotations

import os
import re

import pytest

from tests.conftest import REPO
from tests.engine.coding_model import CodingModel, action

SHARED = REPO.parent / "shared" / "data" / "polyglot"
HAVE = (SHARED / "python" / "exercises" / "practice").is_dir()
WHY = f"the Polyglot exercises are not at {SHARED} (the project's shared data)"
needs_exercises = pytest.mark.skipif(not HAVE, reason=WHY)
# One exercise per language, small and quick to build: the suite's sample (scripts/bench_polyglot.py runs all)
SAMPLE = (
    "cpp/all-your-base",
    "go/beer-song",
    "java/affine-cipher",
    "javascript/affine-cipher",
    "python/affine-cipher",
    "rust/acronym",
)


def polyglot_env() -> dict[str, str]:
    """The environment of a `clade` process that reads the shared copy."""
    return {**os.environ, "CLADE_POLYGLOT_DIR": str(SHARED)}


class PolyglotModel(CodingModel):
    """The coding model of tests/engine/coding_model.py, solving Polyglot exercises with their references."""

    def __init__(self, task, flaky=(), empty=(), **kwargs) -> None:
        super().__init__(**kwargs)
        self.exercises = task.exercises
        self.by_name = {f"{e.name} ({_language(e)})": e for e in task.exercises.values()}
        self.flaky, self.empty = set(flaky), set(empty)

    def __call__(self, model, messages, attempt):
        system = messages[0]["content"]
        user = messages[1]["content"] if len(messages) > 1 else ""
        heading = re.match(r"# Task\n\n# (.+?)\n", user)
        if not system.startswith("You are a software engineer") or heading is None:
            return super().__call__(model, messages, attempt)
        exercise = self.by_name.get(heading.group(1))
        if exercise is None:  # the smoke instance of a self-edited child, or another task's statement
            return super().__call__(model, messages, attempt)
        self.calls["solve"] += 1
        return self._solve(exercise, messages)

    def _solve(self, exercise, messages) -> str:
        done = [m["content"] for m in messages[2:] if m["role"] == "user"]
        if exercise.id in self.empty:
            return action(tool="finish", summary="left the stub as it is")
        if exercise.id in self.flaky and not done:
            stub = exercise.solution_files[0]
            return action(tool="edit", path=stub, search="a line the stub does not hold\n", replace="")
        written = sum(1 for d in done if d.startswith("wrote "))
        files = sorted(exercise.reference().items())
        if written < len(files):
            path, text = files[written]
            return action(tool="create", path=path, content=text)
        return action(tool="finish", summary=f"wrote {len(files)} files")


def _language(exercise) -> str:
    from tasks.polyglot.exercises import LANGUAGE_NAMES

    return LANGUAGE_NAMES[exercise.language]
