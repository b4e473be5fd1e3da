"""One evaluation: run an agent on an instance in a sandbox, then grade it outside.

The sandbox only produces the answer file; the task's evaluator validates
and measures it here, in the engine, so nothing the agent prints or patches
can raise its score (DESIGN.md, Evaluation and sandboxes).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Mapping

from archive.store import utcnow
from engine.sandbox import Sandbox, SandboxJob
from tasks.base import Instance


@dataclass(frozen=True)
class Outcome:
    status: str  # 'ok' | 'error' | 'timeout' | 'killed' | 'bad_output'
    metrics: dict = field(default_factory=dict)
    feedback: str = ""
    runtime_s: float = 0.0
    stdout_tail: str = ""
    stderr_tail: str = ""
    started_at: datetime | None = None
    finished_at: datetime | None = None


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


async def run_agent(task, sandbox: Sandbox, files: Mapping[str, str], instance: Instance) -> Outcome:
    """Run `files` on `instance` and grade the answer. Never raises for anything the agent does."""
    job_files: dict[str, bytes] = {
        path: text.encode("utf-8") for path, text in files.items() if path != task.answer_file
    }  # an answer must come from running, not ship with the agent
    job_files.update(task.sandbox_files(instance))  # the task's runner wins over an agent file of the same name
    job = SandboxJob(files=job_files, command=list(task.command()), answer_file=task.answer_file,
                     limits=task.limits)
    started = utcnow()
    clock = time.perf_counter()
    result = await sandbox.run(job)
    runtime = time.perf_counter() - clock
    common = dict(runtime_s=runtime, stdout_tail=result.stdout_tail, stderr_tail=result.stderr_tail,
                  started_at=started, finished_at=utcnow())
    if result.status != "ok":
        why = result.reason or result.status
        detail = _last_line(result.stderr_tail)
        return Outcome(result.status, {}, f"{why}: {detail}" if detail else why, **common)
    if result.answer is None:
        return Outcome("bad_output", {}, result.reason or f"no {task.answer_file} written", **common)
    grade = task.grade(instance, result.answer)
    if not grade.valid:
        return Outcome("bad_output", {}, grade.feedback, **common)
    return Outcome("ok", grade.metrics, grade.feedback, **common)
