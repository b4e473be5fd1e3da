"""One evaluation: run an agent on an instance in a sandbox, then grade it outside.

The sandbox only produces the answer file; the task's evaluator validates
and measures it here, in the engine, so nothing the agent prints or patches
can raise its score (docs/design.md, "Evaluation: the agent never grades itself").

Three optional parts, each declared by the task's class (tasks.base):
- a check step (`CheckedTask`): when grading means running untrusted code (HumanEval's tests
  on the function the agent wrote), `task.check_job(instance, answer)` returns
  a second SandboxJob, run in a fresh sandbox of the same backend without the
  agent's files or gateway access; `task.grade(instance, answer, check)` then
  reads how it ended, `CheckRun(job, result)` (check_job returns a Grade
  instead when the answer cannot even be checked);
- a judge (`JudgedTask`): when a model grades the answer (a rubric task),
  `await task.judge_grade(instance, answer)` gives the Grade instead of
  `grade` (the engine gave the task the run's LLM client and --judge-model
  with `attach_judge` before the search; the judge's calls are booked with
  purpose 'judge' and no node, and an identical judgement is served from
  the archive);
- the LLM gateway: for an agent that calls a model, the evaluation gets its own
  gateway session (a token, booked against this node and instance). When the
  agent passes its token cap the job is stopped and the evaluation is an
  `error` saying so; when the run's budget is reached (or the provider refuses
  the key) the job is stopped and the outcome carries `stop`: the caller does
  not record it and stops the run.

`RunHandles` holds what runs agents (the sandbox) and what they call a model
through (the gateway): live handles, not state, handed to what runs agents.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from archive import EvaluationRecord
from archive.store import utcnow
from engine.errors import FatalStop, StopRun
from engine.sandbox import Sandbox, SandboxJob, SandboxResult
from tasks.base import AgentJob, CheckedTask, CheckRun, Grade, Instance, JudgedTask

if TYPE_CHECKING:
    from engine.gateway import Gateway

LLM_CLIENT_FILE = Path(__file__).resolve().parents[2] / "agents_seed" / "clade_llm.py"  # data, copied, never imported


@dataclass(frozen=True)
class Outcome:
    # 'ok' | 'error' | 'timeout' | 'killed' | 'bad_output' | 'failed_in_evaluator' (the evaluator ran and said the
    # candidate failed: Grade.caught); every status but 'ok' is a failure and scores 0
    status: str
    metrics: dict = field(default_factory=dict)
    feedback: str = ""
    runtime_s: float = 0.0
    stdout_tail: str = ""
    stderr_tail: str = ""
    started_at: datetime | None = None
    finished_at: datetime | None = None
    stop: str = ""  # not the agent's doing (the run's LLM budget, a bad key): do not record; stop the run
    fatal: bool = False  # the stop is one the user must act on (a bad key, an unknown model)
    llm_cost_usd: float = 0.0  # the agent's model calls through the gateway (SICA's utility reads it)
    llm_tokens: int = 0
    trajectory: tuple = ()  # the agent's steps as it reported them (task.trajectory(answer)), for the archive
    worker: str = ""  # where the job ran, when the sandbox says (a Ray node); else the caller's slot

    def stopped(self) -> StopRun | None:
        """The run's stop this evaluation met (not the agent's result, so never stored), else None."""
        if not self.stop:
            return None
        return FatalStop(self.stop) if self.fatal else StopRun(self.stop)

    def record(
        self,
        node_id: int,
        instance_id: str,
        split: str,
        score: float,
        *,
        repeat: int = 0,
        metrics: dict | None = None,
        worker: str = "",
    ) -> EvaluationRecord:
        """The archive's row of this outcome: `metrics` when the score's policy added to the task's (None: the
        task's), `worker` when the sandbox did not say where it ran (a slot, 'holdout')."""
        return EvaluationRecord(
            node_id=node_id,
            instance_id=instance_id,
            split=split,
            repeat=repeat,
            score=score,
            metrics=self.metrics if metrics is None else metrics,
            status=self.status,
            runtime_s=self.runtime_s,
            stdout_tail=self.stdout_tail,
            stderr_tail=self.stderr_tail,
            feedback=self.feedback,
            worker=self.worker or worker,
            started_at=self.started_at,
            finished_at=self.finished_at,
        )


@dataclass
class RunHandles:
    """The run's live handles, never stored: the sandbox agents run in, and the LLM gateway they reach a model
    through (None: agents get no model; set once the gateway serves, inside the search's event loop)."""

    sandbox: Sandbox
    gateway: Gateway | None = None

    async def run_agent(
        self,
        task: AgentJob,
        files: Mapping[str, str],
        instance: Instance,
        *,
        node_id: int | None = None,
        label: str | None = None,
        purpose: str = "agent",
    ) -> Outcome:
        """`run_agent` in this run's sandbox, through its gateway."""
        return await run_agent(
            task, self.sandbox, files, instance, gateway=self.gateway, node_id=node_id, label=label, purpose=purpose
        )


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


async def run_agent(
    task: AgentJob,
    sandbox: Sandbox,
    files: Mapping[str, str],
    instance: Instance,
    *,
    gateway: Gateway | None = None,
    node_id: int | None = None,
    label: str | None = None,
    purpose: str = "agent",
) -> Outcome:
    """Run `files` on `instance` and grade the answer. Never raises for anything the agent does.

    `gateway`: the run's LLM gateway (None: the agent gets no model access); its calls are booked
    against `node_id` and the instance as `purpose` (`label` names them when there is no node, e.g. a
    reference agent, or a smoke run of a child not stored yet)."""
    job_files: dict[str, bytes] = {
        path: text.encode("utf-8") for path, text in files.items() if path != task.answer_file
    }  # an answer must come from running, not ship with the agent
    job_files.update(task.sandbox_files(instance))  # the task's runner wins over an agent file of the same name
    session = gateway.open_session(node_id, instance.id, label, purpose) if gateway is not None else None
    if session is not None and "clade_llm.py" not in job_files:  # the client, for tasks that do not ship it
        job_files["clade_llm.py"] = LLM_CLIENT_FILE.read_bytes()
    started = utcnow()
    clock = time.perf_counter()
    try:
        job = SandboxJob(
            files=job_files,
            command=list(task.command()),
            answer_file=task.answer_file,
            limits=task.limits,
            llm=gateway.endpoint(session) if gateway is not None and session is not None else None,
            hidden=tuple(task.hidden_paths()),
        )
        result = await _run_watched(sandbox, job, session)
    finally:
        if gateway is not None and session is not None:
            gateway.close_session(session)
    outcome = await _graded(task, sandbox, instance, result, session, clock, started)
    if session is None:
        return outcome
    return replace(outcome, llm_cost_usd=session.cost_usd, llm_tokens=session.tokens_used)


async def _graded(
    task: AgentJob,
    sandbox: Sandbox,
    instance: Instance,
    result: SandboxResult | None,
    session,
    clock: float,
    started: datetime,
) -> Outcome:
    if session is not None and (session.capped or session.stop_reason or session.overseer_reason):
        ended = Outcome(  # what the three endings share
            "error",
            runtime_s=time.perf_counter() - clock,
            started_at=started,
            finished_at=utcnow(),
            stdout_tail=result.stdout_tail if result else "",
            stderr_tail=result.stderr_tail if result else "",
        )
        if session.stop_reason:
            return replace(ended, feedback=session.stop_reason, stop=session.stop_reason, fatal=session.stop_fatal)
        if session.overseer_reason:
            return replace(ended, status="killed", feedback=f"stopped by the overseer: {session.overseer_reason}")
        return replace(ended, feedback=session.cap_reason)
    assert result is not None
    steps = trajectory_of(task, result.answer)
    if result.status != "ok":
        return _outcome(result.status, {}, _why(result), result, clock, started, steps)
    if result.answer is None:
        return _outcome("bad_output", {}, result.reason or f"no {task.answer_file} written", result, clock, started)
    try:
        grade = await _grade(task, sandbox, instance, result.answer)
    except StopRun as exc:  # a judge's call (rubric tasks): the run's budget or key, not
        stop = str(exc)  # the agent's doing: not recorded, the run stops
        return replace(_outcome("error", {}, stop, result, clock, started), stop=stop, fatal=isinstance(exc, FatalStop))
    if not grade.valid:
        return _outcome("bad_output", {}, grade.feedback, result, clock, started, steps)
    if not grade.caught:
        grade = task.caught_in_output(grade, result)
    if grade.caught:  # the evaluator's own figures stay (metrics), its error leads the feedback
        return _outcome("failed_in_evaluator", grade.metrics, caught_feedback(grade), result, clock, started, steps)
    return _outcome("ok", grade.metrics, grade.feedback, result, clock, started, steps)


def caught_feedback(grade: Grade) -> str:
    """The feedback of an evaluation the evaluator failed: its error first (the seed's verdict and the
    summary quote it), then the rest of what the task said, unless that only repeats the error."""
    said = f"the evaluator caught a failure: {grade.caught}"
    if not grade.feedback or grade.feedback == grade.caught:
        return said
    return f"{said}; {grade.feedback}"


def trajectory_of(task: AgentJob, answer: bytes | None) -> tuple:
    """The agent's steps as the task reads them from its answer (an agent that keeps a trajectory), or ()."""
    if answer is None:
        return ()
    try:
        return tuple(step for step in task.trajectory(answer) if isinstance(step, dict))
    except Exception:  # noqa: BLE001 - what the agent wrote is untrusted; a bad trajectory is only lost
        return ()


def _why(result: SandboxResult) -> str:
    why = result.reason or result.status
    detail = _last_line(result.stderr_tail)
    return f"{why}: {detail}" if detail else why


def _outcome(
    status: str, metrics: dict, feedback: str, result: SandboxResult, clock: float, started: datetime, steps: tuple = ()
) -> Outcome:
    return Outcome(
        status,
        metrics,
        feedback,
        runtime_s=time.perf_counter() - clock,
        stdout_tail=result.stdout_tail,
        stderr_tail=result.stderr_tail,
        started_at=started,
        finished_at=utcnow(),
        trajectory=steps,
        worker=result.worker,
    )


async def _grade(task: AgentJob, sandbox: Sandbox, instance: Instance, answer: bytes) -> Grade:
    """The task's verdict; with a check step, after running it in a fresh sandbox job; by a judge model."""
    if isinstance(task, JudgedTask):  # a rubric task: its judge model grades the answer (the task's attached client)
        return await task.judge_grade(instance, answer)
    if not isinstance(task, CheckedTask):
        return task.grade(instance, answer)
    job = task.check_job(instance, answer)
    if isinstance(job, Grade):  # the answer could not even be checked
        return job
    return task.grade(instance, answer, CheckRun(job, await sandbox.run(job)))


async def _run_watched(sandbox: Sandbox, job: SandboxJob, session) -> SandboxResult | None:
    """The job's result; None when the gateway ended the evaluation first (the job is killed then)."""
    if session is None:
        return await sandbox.run(job)
    run = asyncio.ensure_future(sandbox.run(job))
    ended = asyncio.ensure_future(session.ended.wait())
    try:
        await asyncio.wait({run, ended}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not run.done():
            run.cancel()  # the sandbox kills everything the job started before the cancellation ends
        ended.cancel()
        await asyncio.gather(run, ended, return_exceptions=True)
    if session.capped or session.stop_reason or session.overseer_reason:
        return run.result() if run.done() and not run.cancelled() and run.exception() is None else None
    return run.result()
