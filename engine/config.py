"""A run's configuration: what the user asked for, stored as JSON in `runs.config`."""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Mapping

from engine.errors import UserError


@dataclass(frozen=True)
class RunConfig:
    task: str = "binpack"
    policy: str = "hgm"
    budget: int = 200  # dev evaluations (node x instance), HGM's convention
    workers: int = 0  # 0: one per core
    seed: int = 0
    run_dir: str = "runs"
    time_limit: float | None = None  # seconds of wall time for the search phase
    agent: str | None = None  # a file or folder to start from instead of the task's seed
    instances: str | None = None  # a JSON file of instances instead of generated ones
    sandbox: str = "process"
    eval_timeout: float | None = None  # per-evaluation wall limit, overriding the task's
    mutator: str = "offline"

    def resolved_workers(self) -> int:
        return self.workers or os.cpu_count() or 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "RunConfig":
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    def with_overrides(self, **changes: Any) -> "RunConfig":
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def validate(self) -> "RunConfig":
        from search import POLICIES
        from tasks import TASKS

        if self.task not in TASKS:
            raise UserError(f"unknown task {self.task!r}; choose one of: {', '.join(TASKS)}")
        if self.policy not in POLICIES:
            raise UserError(f"unknown policy {self.policy!r}; choose one of: {', '.join(sorted(POLICIES))}")
        if self.budget <= 0:
            raise UserError(f"--budget must be a positive number of evaluations, not {self.budget}")
        if self.workers < 0:
            raise UserError(f"--workers must be 1 or more (0 means one per core), not {self.workers}")
        if self.time_limit is not None and self.time_limit <= 0:
            raise UserError(f"--time-limit must be a positive number of seconds, not {self.time_limit}")
        if self.eval_timeout is not None and self.eval_timeout <= 0:
            raise UserError(f"--timeout must be a positive number of seconds, not {self.eval_timeout}")
        if self.sandbox != "process":
            raise UserError(f"unknown sandbox {self.sandbox!r}; choose one of: process")
        if self.mutator != "offline":
            raise UserError(f"unknown mutator {self.mutator!r}; choose one of: offline")
        return self
