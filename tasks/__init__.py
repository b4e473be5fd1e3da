"""Benchmarks: the Task protocol and the built-in tasks."""
from __future__ import annotations

TASKS = ("binpack",)


def make_task(name: str, instances_path: str | None = None):
    """A task by name; ValueError lists the known names."""
    if name == "binpack":
        from tasks.binpack.task import BinPackTask

        return BinPackTask(instances_path=instances_path)
    raise ValueError(f"unknown task {name!r}; choose one of: {', '.join(TASKS)}")
