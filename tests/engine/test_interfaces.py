"""A new task and new mutators written from the declarations alone (tasks/base.py, engine/mutators/base.py), in a
module of their own, run a real search through the path `python -m engine.search` takes."""

from __future__ import annotations

import importlib
import textwrap
from pathlib import Path

import pytest

from engine.config import RunConfig
from engine.front.api import run_search
from engine.runinfo.cli import main as runs_main

PLUGINS = '''
"""A task whose agent is one function `f(x)`, and two mutators that change the constant it adds."""

import asyncio
import json
import re
import sys

from engine.mutators.base import AsyncMutator, MutationError, Proposal, SyncMutator
from engine.sandbox.base import SandboxLimits
from tasks.base import Grade, Instance, Task

TARGET = 1000


class AddTask(Task):
    name = "add"
    description = "Return x plus a constant; the closer f(x) comes to 1000 on every instance, the better."
    entry_file = "agent.py"
    entry_function = "f"
    entry_args = ("x",)
    answer_file = "answer.json"
    limits = SandboxLimits(timeout_s=20.0, cpu_s=20)
    raw_metric = "distance"

    def seed_files(self):
        return {"agent.py": "def f(x):\\n    return x + 1\\n"}

    def instances(self):
        return [Instance("a", "dev", {"x": 3}), Instance("b", "dev", {"x": 7}), Instance("c", "holdout", {"x": 5})]

    def sandbox_files(self, instance):
        runner = f"import json, agent\\njson.dump(agent.f({instance.data['x']}), open('answer.json', 'w'))\\n"
        return {"runner.py": runner.encode()}

    def command(self):
        return [self.python or sys.executable, "runner.py"]

    def grade(self, instance, answer):
        value = json.loads(answer)
        if not isinstance(value, (int, float)):
            return Grade(False, {}, "f(x) is not a number")
        return Grade(True, {"distance": abs(TARGET - value)}, "")

    def score(self, instance, metrics, reference):
        return 1.0 / (1.0 + metrics["distance"])

    def raw_value(self, metrics):
        return sum(m["distance"] for m in metrics) / len(metrics) if metrics else None


def bump(files, entry_file, rng):
    source = files[entry_file]
    found = re.search(r"x \\+ (\\d+)", source)
    if found is None:
        raise MutationError("no constant to change")
    step = int(rng.integers(1, 400))
    child = source.replace(found.group(0), f"x + {int(found.group(1)) + step}")
    return Proposal({**files, entry_file: child}, f"constant +{step}")


class BumpMutator(SyncMutator):
    name = "bump"
    novelty_check = False  # a changed constant is a near-duplicate by design: only exact repeats count

    def __init__(self):
        self.measured = []

    def propose(self, parent_files, context, rng):
        return bump(parent_files, context.entry_file, rng)

    def child_measured(self, node):
        self.measured.append(node)


class SlowBumpMutator(AsyncMutator):
    name = "slow-bump"
    model = "thinking/none"
    novelty_check = False

    async def propose_async(self, parent_files, context, rng):
        await asyncio.sleep(0.01)  # as a model would take its time
        return bump(parent_files, context.entry_file, rng)
'''


@pytest.fixture
def plugins(tmp_path, monkeypatch):
    (tmp_path / "my_plugins.py").write_text(textwrap.dedent(PLUGINS))
    monkeypatch.syspath_prepend(str(tmp_path))
    return importlib.import_module("my_plugins")


def _search(tmp_path, task, mutator, capsys) -> tuple[object, str]:
    from archive import Archive

    config = RunConfig.of(budget=10, workers=2, seed=0, run_dir=str(tmp_path / "runs"), sandbox="process")
    file = run_search(config, task, mutator, quiet=False)
    said = capsys.readouterr().out
    (folder,) = (tmp_path / "runs").iterdir()
    assert file == folder / "archive.duckdb"  # the new run's archive, as the Python API learns it
    return Archive.open(folder / "archive.duckdb", read_only=True), said


@pytest.mark.parametrize("form", ["sync", "async"])
def test_a_new_task_and_mutator_from_the_declarations_run_a_search(plugins, tmp_path, capsys, form):
    task = plugins.AddTask()
    mutator = plugins.BumpMutator() if form == "sync" else plugins.SlowBumpMutator()
    archive, said = _search(tmp_path, task, mutator, capsys)
    try:
        assert "Task add" in said and "budget spent" in said
        children = archive.query("SELECT id, status, model FROM nodes WHERE mutator = ? ORDER BY id", [mutator.name])
        assert children and all(status == "valid" for _, status, _ in children)
        assert {model for _, _, model in children} == {mutator.model}  # None for the sync one, as it declares
        evaluated = archive.query(
            "SELECT count(*) FROM evaluations WHERE split = 'dev' AND node_id > 0 AND status = 'ok'"
        )[0][0]
        assert evaluated >= 1  # the new task evaluated the new mutator's children
        best = archive.query("SELECT max(score) FROM evaluations WHERE split = 'dev'")[0][0]
        seed = archive.query("SELECT max(score) FROM evaluations WHERE node_id = 0 AND split = 'dev'")[0][0]
        assert best > seed  # a bigger constant is closer to the target: the search went somewhere
        assert (archive.config()["task"], archive.config()["mutator"]) == ("add", mutator.name)
        if form == "sync":
            assert mutator.measured  # its declared capability was called
        run = str(archive.path.parent)
    finally:
        archive.close()
    assert runs_main(["show", run]) == 0
    shown = capsys.readouterr().out
    assert f"Run {Path(run).name}" in shown and "from the add seed" in shown and mutator.name in shown
