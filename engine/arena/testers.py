"""The arena's second population seen as a task: a tester is run like an agent, its answer vetted outside.

A tester (`tester.py`, `propose(n, seed) -> list`) runs in the run's sandbox
through the same `run_agent` as any agent, on a pseudo-instance `round-R`
that carries only n and the seed. Its answer is a list of proposals; the
task's oracle confirms or refuses each one here, in the engine, never in a
sandbox (`vet`). `TesterTask` gives the mutators what they need (an entry
point, a description) so that testers evolve with the run's own mutator.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from engine.sandbox.base import SandboxLimits
from tasks.base import ArenaTask, Grade, Instance, Task

RUNNER = Path(__file__).resolve().parent / "tester_runner.py"  # data, copied into the sandbox, never imported
TESTER_LIMITS = SandboxLimits(timeout_s=20.0, cpu_s=20, memory_mb=512, file_size_mb=16, processes=32)


def supports_arena(task: Task) -> TypeGuard[ArenaTask]:
    """A task can host an arena when it has an oracle and a seed tester (an `ArenaTask`: tasks.email_validation)."""
    return isinstance(task, ArenaTask)


class TesterTask(Task):
    """The task testers are: entry `propose(n, seed)` in tester.py, answer proposals.json. Its instances are
    made round by round (engine.arena.rounds), so it lists none."""

    entry_file = "tester.py"
    entry_function = "propose"
    entry_args = ("n", "seed")
    answer_file = "proposals.json"
    limits = TESTER_LIMITS
    raw_metric = "broken share"

    def __init__(self, task: ArenaTask) -> None:
        self.task = task
        self.name = f"{task.name} (testers)"
        self.description = task.tester_description
        self.python = task.python

    def hidden_paths(self) -> tuple[str, ...]:
        return self.task.hidden_paths()

    def instances(self) -> list[Instance]:
        return []

    def raw_value(self, metrics: Sequence[Mapping]) -> float | None:
        return None

    def seed_files(self) -> dict[str, str]:
        return self.task.tester_files()

    def sandbox_files(self, instance: Instance) -> dict[str, bytes]:
        return {
            "tester_runner.py": RUNNER.read_bytes(),
            "arena_round.json": json.dumps({"n": instance.data["n"], "seed": instance.data["seed"]}).encode(),
        }

    def command(self) -> Sequence[str]:
        return [self.python or sys.executable, "tester_runner.py"]

    def grade(self, instance: Instance, answer: bytes) -> Grade:
        """Only the shape: a list of proposals. What they are worth is the oracle's word (`vet`)."""
        try:
            data = json.loads(answer)
        except (ValueError, UnicodeDecodeError):
            return Grade(False, {}, "proposals.json is not JSON")
        proposals = data.get("proposals") if isinstance(data, dict) else None
        if not isinstance(proposals, list):
            return Grade(False, {}, 'proposals.json must be {"proposals": [...]}')
        return Grade(True, {"proposals": proposals}, f"{len(proposals)} proposals")

    def score(self, instance: Instance, metrics: Mapping, reference: Mapping | None) -> float:
        return 0.0  # a tester's worth is what its confirmed tests break (engine.arena.rounds)


@dataclass(frozen=True)
class Verdict:
    item: int
    proposal: object
    reason: str | None  # None: confirmed by the oracle and new

    @property
    def accepted(self) -> bool:
        return self.reason is None


def vet(task: ArenaTask, proposals: Iterable[object], known: set[str]) -> list[Verdict]:
    """The oracle's word on each proposal, in order. `known` (the keys of every instance, dev and holdout,
    and of earlier proposals accepted) grows with each one accepted, so a repeat is refused."""
    verdicts = []
    for item, proposal in enumerate(proposals):
        key = task.proposal_key(proposal)
        reason: str | None
        if key is not None and key in known:
            reason = "already in the test set"
        else:
            reason = task.confirm(proposal)
        if reason is None and key is not None:  # a proposal without a key is never compared with others
            known.add(key)
        verdicts.append(Verdict(item, proposal, reason))
    return verdicts
