"""The `Task` protocol: what the engine needs from a benchmark.

A task owns its instances, what goes into the sandbox to run an agent on one
(`sandbox_files`, `command`), and the grading of the answer that comes back,
which happens outside the sandbox and trusts nothing the agent printed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from engine.sandbox.base import SandboxJob, SandboxLimits, SandboxResult


@dataclass(frozen=True)
class Instance:
    id: str
    split: str  # 'dev' | 'holdout'
    data: dict


@dataclass(frozen=True)
class Grade:
    """The evaluator's verdict on one answer: valid or not, raw figures, a line of feedback."""

    valid: bool
    metrics: dict = field(default_factory=dict)
    feedback: str = ""


@dataclass(frozen=True)
class CheckRun:
    """A task's check step as it ran (see `Task.check_job`): the job the task asked for and how it ended."""

    job: SandboxJob
    result: SandboxResult


class Task(Protocol):
    name: str
    description: str
    entry_file: str
    entry_function: str
    entry_args: tuple[str, ...]
    answer_file: str
    limits: SandboxLimits
    raw_metric: str  # short name of the figure reports show beside scores, e.g. "excess %"
    raw_metric_note: str  # one line saying what it is

    def seed_files(self) -> dict[str, str]: ...

    def reference_agents(self) -> dict[str, dict[str, str]]: ...

    def instances(self) -> list[Instance]: ...

    def sandbox_files(self, instance: Instance) -> dict[str, bytes]: ...

    def command(self) -> Sequence[str]: ...

    def grade(self, instance: Instance, answer: bytes) -> Grade: ...

    def score(self, instance: Instance, metrics: Mapping, reference: Mapping | None) -> float: ...

    def raw_value(self, metrics: Sequence[Mapping]) -> float | None: ...

    # Optional parts (looked up with getattr; binpack has none of them):
    # - `python`: the interpreter `command()` (and `check_job`) run, set by the engine from --task-python
    #   or a task folder's `python` file; None (or absent): the engine's own `sys.executable`.
    # - `check_job(instance, answer) -> SandboxJob | Grade`: grading runs untrusted code (tests on the
    #   agent's function): the engine runs that job in a fresh sandbox of the run's backend, then calls
    #   `grade(instance, answer, CheckRun(job, result))`; a Grade instead means the answer cannot be checked.
    # - `hidden_paths() -> tuple[str, ...]`: host paths no sandbox may see (an installed benchmark's data).
    # - `agent_llm`: "required" | "optional" | "none": does the agent call a model (engine/gateway)?
    # - `agent_max_tokens`: tokens one evaluation's agent may use through the gateway.
    # - `needs_judge`: True when a model grades the answers (a rubric task): the run needs --judge-model.
    # - `attach_judge(client, model)`: the engine gives such a task the run's LLMClient and --judge-model
    #   before the search.
    # - `async judge_grade(instance, answer) -> Grade`: awaited instead of `grade` (engine.loop.evaluation).
