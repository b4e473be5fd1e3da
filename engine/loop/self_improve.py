"""`--mutator self`: the parent agent, run on a copy of its own source, makes its child (DGM, HGM, SICA).

An expansion of node P:
1. reads P's dev evaluations and picks a weakness (engine.mutators.self_problem:
   an unresolved instance with its log, empty patches, context overflow, a
   result that varies); with `--meta-steps diagnose,implement` a first model call
   (purpose `diagnose`) reads the log and proposes the change;
2. runs P's own agent in a sandbox of the run's backend on a workspace holding
   P's files, with that problem statement (engine/loop/self_runner.py). The
   agent reaches `--model` through the run's gateway, its calls booked with
   purpose `self_improve` against P, under the same token cap and overseer as
   an evaluation; the task's hidden paths stay hidden;
3. the files it leaves in the workspace are the child. Before the child is
   stored it must differ from P, compile, keep the entry point (check_child, in
   store_child) and solve one smoke instance (the task's `smoke_instance()`,
   else the dev instance P did best on), run like an evaluation with purpose
   `smoke`; a child that fails that is stored `invalid` with the reason.
P's steps while it edited itself are stored with the child (trajectory_steps,
kind 'expansion'). The expansion's key ("self parent P child k") names its
calls, so a resumed run reuses answers already paid for and `--replay` asks the
same questions again.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from engine.errors import StopRun
from engine.loop.evaluation import LLM_CLIENT_FILE, Outcome, RunHandles
from engine.loop.state import RunState
from engine.mutators import AsyncMutator, ExpansionFailed, MutationContext, MutationError, Proposal
from engine.mutators.llm import lineage_notes
from engine.mutators.self_problem import EvaluationLog, choose_weakness, diagnosis_messages, self_improvement_statement
from engine.mutators.validate import check_child
from tasks.base import AgentJob, Grade, Instance, Task

if TYPE_CHECKING:
    from engine.llm import LLMClient

RUNNER = Path(__file__).resolve().parent / "self_runner.py"
WORKSPACE = "workspace"
SELF_CHECK = """\
import ast, pathlib, sys
problems = []
for path in sorted(pathlib.Path('.').rglob('*.py')):
    try:
        ast.parse(path.read_text(encoding='utf-8'), str(path))
    except (SyntaxError, ValueError, UnicodeDecodeError) as exc:
        problems.append(f'{path}: {exc}')
entry = pathlib.Path(sys.argv[1])
if entry.is_file() and not problems:
    tree = ast.parse(entry.read_text(encoding='utf-8'))
    if not any(isinstance(n, ast.FunctionDef) and n.name == sys.argv[2] for n in tree.body):
        problems.append(f'{entry}: no top-level def {sys.argv[2]}')
print('\\n'.join(problems) or 'self-check passed: every file parses and the entry point is there')
sys.exit(1 if problems else 0)
"""


class SelfImprovementJob(AgentJob):
    """The self-improvement run, shaped as an agent's job so that run_agent gives it the gateway, cap and
    overseer."""

    answer_file = "answer.json"

    def __init__(self, task: Task, statement: str) -> None:
        self.task = task
        self.name = f"{task.name} (self-improvement)"
        self.statement = statement
        self.limits = task.limits
        self.python = task.python

    def hidden_paths(self) -> tuple[str, ...]:
        return self.task.hidden_paths()

    def sandbox_files(self, instance: Instance) -> dict[str, bytes]:
        files = {f"{WORKSPACE}/{path}": text.encode() for path, text in instance.data["files"].items()}
        problem = {
            "instance_id": instance.id,
            "statement": self.statement,
            "workspace": WORKSPACE,
            "test_command": f"python ../self_check.py {self.task.entry_file} {self.task.entry_function}",
            "trajectory_file": "trajectory.jsonl",
            "entry_file": self.task.entry_file,
            "entry_function": self.task.entry_function,
        }
        files.update(
            {
                "self_runner.py": RUNNER.read_bytes(),
                "self_check.py": SELF_CHECK.encode(),
                "clade_llm.py": LLM_CLIENT_FILE.read_bytes(),
                "problem.json": json.dumps(problem).encode(),
            }
        )
        return files

    def command(self) -> list[str]:
        return [self.python or sys.executable, "self_runner.py"]

    def grade(self, instance: Instance, answer: bytes) -> Grade:
        try:
            data = json.loads(answer)
            files = {str(k): v for k, v in data["files"].items() if isinstance(v, str)}
        except (ValueError, UnicodeDecodeError, KeyError, TypeError, AttributeError):
            return Grade(False, {}, "the self-improvement run left no readable answer.json")
        return Grade(
            True, {"files": files, "summary": str(data.get("summary") or ""), "error": str(data.get("error") or "")}, ""
        )

    def trajectory(self, answer: bytes) -> list[dict]:
        steps = json.loads(answer).get("trajectory") or []
        return steps if isinstance(steps, list) else []


class SelfMutator(AsyncMutator):
    name = "self"
    novelty_check = False  # a focused self-edit of a whole agent is near its parent by design; exact duplicates count

    def __init__(
        self, client: LLMClient, model: str, state: RunState, handles: RunHandles, *, diagnose: bool = False
    ) -> None:
        """`handles`: where the parent runs on its own code (the run's sandbox) and the gateway it calls `model`
        through (set once the search's gateway serves)."""
        self.client = client
        self.model: str = model
        self.state = state
        self.handles = handles
        self.diagnose = diagnose
        self._launched: dict[int, int] = {}

    def _key(self, parent: int) -> str:
        """The k-th self-improvement of this parent over the run (resumes count the children stored)."""
        k = self._launched.get(parent, int(self.state.tree.n_children[parent]))
        self._launched[parent] = k + 1
        return f"self parent {parent} child {k}"

    # ----- the parent's record -------------------------------------------------
    def _logs(self, node: int) -> list[EvaluationLog]:
        archive = self.state.archive
        rows = archive.first_dev_evaluation_logs(node)
        steps: dict[str, list[dict]] = {}
        for instance, step, tool, action, result in archive.evaluation_steps(node):
            steps.setdefault(instance, []).append({"step": step, "tool": tool, "action": action, "result": result})
        return [
            EvaluationLog(
                i, status, float(score), json.loads(metrics or "{}"), feedback, statement, tuple(steps.get(i, ()))
            )
            for i, status, score, metrics, feedback, statement in rows
        ]

    def _solved_by(self, node: int) -> set[str]:
        if node < 0:
            return set()
        return {
            log.instance_id
            for log in self._logs(node)
            if log.metrics.get("resolved", log.metrics.get("task_score", log.score)) >= 1
        }

    def _tried(self, parent: int) -> list[tuple[str, str]]:
        """(description, outcome) of the children already stored from this parent, oldest first."""
        return [
            (c.description or "a change", c.status if c.status == "valid" else f"{c.status}: {c.reason}"[:160])
            for c in self.state.archive.children(parent)
        ]

    def _smoke_instance(self, parent: int) -> Instance | None:
        smoke = self.state.task.smoke_instance()
        if smoke is not None:
            return smoke
        best = self.state.archive.best_ok_dev_instance(parent)
        by_id = {inst.id: inst for inst in self.state.dev}
        return by_id.get(best) if best is not None else None

    # ----- the expansion ---------------------------------------------------------
    async def propose_async(
        self, parent_files: Mapping[str, str], context: MutationContext, rng: np.random.Generator
    ) -> Proposal:
        """Only `context.pinned.key` counts: the model is the run's one, and a self-edit asks for no answer
        format."""
        parent = context.parent
        key = context.pinned.key or self._key(parent)
        try:
            return await self._improve(dict(parent_files), context, rng, parent, key)
        except (StopRun, ExpansionFailed):  # a stop; a failure that already says what it was
            raise
        except Exception as exc:  # stored with the key (a resume does not adopt its calls again) and the model
            raise ExpansionFailed(exc, key=key, model=self.model) from exc

    def _failed(self, reason: str, key: str, outcome: Outcome) -> ExpansionFailed:
        """A failed expansion that still keeps the parent's steps (stored with the failed child)."""
        return ExpansionFailed(MutationError(reason), key=key, model=self.model, trajectory=outcome.trajectory)

    async def _improve(
        self, files: dict[str, str], context: MutationContext, rng: np.random.Generator, parent: int, key: str
    ) -> Proposal:
        task = self.state.task
        if self.handles.gateway is None:
            raise MutationError("--mutator self needs the run's LLM gateway (a model for the agents)")
        parent_of = int(self.state.tree.parent[parent])
        weakness = choose_weakness(self._logs(parent), self._solved_by(parent_of), rng)
        tried = self._tried(parent)
        statement = self_improvement_statement(
            weakness, sorted(files), context.entry_file, context.entry_function, task.description, tried=tried
        )
        note = ""
        if self.diagnose:
            answer = await self.client.complete(
                diagnosis_messages(statement, lineage_notes(self.state, parent)),
                model=self.model,
                purpose="diagnose",
                node_id=parent,
                key=f"{key} diagnose",
                temperature=0.0,
            )
            note = answer.text.strip()[:4000]
            statement = self_improvement_statement(
                weakness, sorted(files), context.entry_file, context.entry_function, task.description, note
            )
        job = SelfImprovementJob(task, statement)
        outcome = await self.handles.run_agent(
            job, files, Instance(key, "dev", {"files": files}), node_id=parent, label=key, purpose="self_improve"
        )
        if outcome.stop:  # the run's budget stops the run; a refused key only fails this child
            raise StopRun(outcome.stop) if not outcome.fatal else MutationError(outcome.stop)
        if outcome.status != "ok":
            why = f"the self-improvement run ended {outcome.status}: {outcome.feedback}"[:400]
            raise self._failed(why, key, outcome)
        child = outcome.metrics["files"]
        about = f"self-edit ({weakness.kind}{' on ' + weakness.log.instance_id if weakness.log else ''})"
        summary = outcome.metrics.get("summary") or outcome.metrics.get("error") or ""
        description = f"{about}: {' '.join(summary.split())}"[:240] if summary else about
        if child == files:
            why = f"the agent left its own code unchanged (an empty patch); it said: {summary[:200]}"
            raise self._failed(why, key, outcome)
        proposal = Proposal(
            files=child, description=description, model=self.model, key=key, trajectory=outcome.trajectory, note=note
        )
        if check_child(child, task.entry_file, task.entry_function, task.entry_args):
            return proposal  # store_child says why it is invalid; no smoke run for code that cannot load
        from archive.store import files_hash

        if files_hash(child) in self.state.code_hashes:
            return proposal  # a duplicate: store_child says so
        return await self._smoke(proposal, parent, key)

    async def _smoke(self, proposal: Proposal, parent: int, key: str) -> Proposal:
        from dataclasses import replace

        task = self.state.task
        smoke = self._smoke_instance(parent)
        if smoke is None:
            return proposal
        outcome = await self.handles.run_agent(
            task, proposal.files, smoke, node_id=parent, label=f"{key} smoke", purpose="smoke"
        )
        if outcome.stop:
            raise StopRun(outcome.stop) if not outcome.fatal else MutationError(outcome.stop)
        score = task.score(smoke, outcome.metrics, None) if outcome.status == "ok" else 0.0
        if score >= 1.0:
            return proposal
        why = f"{outcome.status}: {outcome.feedback}" if outcome.feedback else outcome.status
        return replace(proposal, invalid_reason=f"the child does not solve the smoke instance {smoke.id} ({why})"[:500])
