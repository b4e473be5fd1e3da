"""What opening a run (new, resumed or from a snapshot) shares: which flags a run keeps, its folder, its task."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from engine.config import RunConfig
from engine.errors import UserError

if TYPE_CHECKING:
    from archive import Archive
    from tasks.base import Task

# Flags that define what a run is; a resumed run keeps its own.
LIMIT_FLAGS = ("eval_timeout", "memory_mb", "cpu_time", "max_procs", "output_bytes", "cpus")
FIXED_ON_RESUME = (
    "task",
    "target",
    "policy",
    "stages",
    "final",
    "final_k",
    "seed",
    "agent",
    "instances",
    "sandbox",
    "image",
    "task_python",
    "run_dir",
    *LIMIT_FLAGS,
    "model",
    "api_base",
    "embedding_model",
    "meta_steps",
    "answer_format",
    "model_choice",
    "replay",
    "agent_model",
    "agent_max_tokens",
    "mutator",
    "utility",
    "cost_cap",
    "time_cap",
    "overseer",
    "judge_model",
    "bootstrap",
    "arena",
    "arena_round",
    "arena_population",
    "arena_proposals",
)
LLM_FLAGS = (
    "model",
    "api_base",
    "embedding_model",
    "max_cost",
    "max_tokens",
    "llm_concurrency",
    "meta_steps",
    "answer_format",
    "model_choice",
    "agent_model",
    "agent_max_tokens",
    "mutator",
    "utility",
    "cost_cap",
    "time_cap",
    "overseer",
    "judge_model",
    "bootstrap",
)
BREAKER_FLAGS = ("max_failed_expansions", "max_failing_time")
ARENA_FLAGS = ("arena", "arena_round", "arena_population", "arena_proposals")
# What may change when a stopped run goes on: how much to spend, how fast, how much failure to bear.
RESUME_OVERRIDES = (
    "budget",
    "workers",
    "time_limit",
    "max_cost",
    "max_tokens",
    "llm_concurrency",
    "executor",
    "ray_address",
    "gateway_listen",
    "gateway_tls",
    "live_interval",
    *BREAKER_FLAGS,
)


def new_run_folder(config: RunConfig) -> tuple[str, Path]:
    """(run id, its folder under --run-dir): the task, policy, seed and time, never an existing folder."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    how = f"arena-{config.arena}" if config.arena else config.policy
    base = f"{Path(config.task).name}-{how}-s{config.seed}-{stamp}"  # a task folder: its name
    root = Path(config.run_dir)
    run_id, k = base, 1
    while (root / run_id).exists():
        k += 1
        run_id = f"{base}-{k}"
    return run_id, root / run_id


def make_run_task(config: RunConfig) -> Task:
    """The run's task, with the run's overrides of its sandbox limits and its interpreter (`task.python`:
    --task-python, else the task folder's `python` file; checked here, a UserError when unusable)."""
    import math
    from dataclasses import replace

    from engine.front.task_python import choose_task_python
    from tasks import make_task

    python = choose_task_python(config)
    try:
        task = make_task(config.task, config.instances, target=config.target)
    except ValueError as exc:  # a task folder that cannot be read as its format says
        raise UserError(str(exc)) from None
    if python is not None:
        task.python = python
    limits = task.limits
    if config.eval_timeout:  # CPU time follows the wall limit unless given too
        limits = replace(limits, timeout_s=config.eval_timeout, cpu_s=max(1, math.ceil(config.eval_timeout)))
    overrides = {
        "memory_mb": config.memory_mb,
        "cpu_s": config.cpu_time,
        "processes": config.max_procs,
        "output_bytes": config.output_bytes,
        "cpus": config.cpus,
    }
    task.limits = replace(limits, **{k: v for k, v in overrides.items() if v is not None})
    return task


def adopt_run_seed(task: Task, archive: Archive) -> None:
    """A run whose seed was written by --bootstrap: the task takes node 0's program as its seed (entry point)."""
    if not task.has_seed:
        task.adopt_seed(archive.node_files(0)[task.entry_file])
