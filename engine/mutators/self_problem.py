"""What a self-improving agent is asked to fix in itself: a problem statement made from its own evaluation logs.

Following the Darwin Gödel Machine (Zhang et al. 2025, arXiv 2505.22954,
its self-improvement step) and the Huxley-Gödel Machine (Wang et al. 2025,
arXiv 2510.21614), which reuses it: the parent's dev evaluations are read and
one weakness is chosen to work on:
- `empty_patch`: the agent left the repository unchanged on some problems;
- `context_overflow`: it ran out of its token allowance (or the model's
  context window) on some problems;
- `stochastic`: a problem the agent's own parent solved and it did not (or
  the other way round): its results vary between near-identical versions;
- `unresolved`: one dev problem it did not solve, with its log.
DGM picks the three special cases with probability 0.25 each when they are
seen, else a failed instance at random; so does `choose_weakness`, with the
expansion's own random generator (a seed gives the same choice). Only dev
evaluations are read: holdout never reaches a prompt.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

SPECIAL_P = 0.25
TRIED_SHOWN = 6
STEPS_SHOWN = 12
EXCERPT = 400
OVERFLOW_MARKS = ("token cap", "context window", "context length", "contextwindowexceeded", "maximum context")


@dataclass(frozen=True)
class EvaluationLog:
    """One dev evaluation of the parent, as the archive holds it."""

    instance_id: str
    status: str
    score: float
    metrics: dict
    feedback: str
    statement: str  # what the agent was asked (the instance's statement or prompt)
    steps: tuple[dict, ...] = ()  # its trajectory (tool, action, result)


@dataclass(frozen=True)
class Weakness:
    kind: str  # 'empty_patch' | 'context_overflow' | 'stochastic' | 'unresolved' | 'general'
    log: EvaluationLog | None
    count: int = 0  # how many evaluations show it


def _solved(log: EvaluationLog) -> bool:
    resolved = log.metrics.get("resolved")
    return bool(resolved) if resolved is not None else log.score >= 1.0


def _empty(log: EvaluationLog) -> bool:
    return log.metrics.get("files_changed") == 0 and not _solved(log)


def _overflow(log: EvaluationLog) -> bool:
    text = f"{log.feedback} {json.dumps(log.metrics)}".lower()
    return any(mark in text for mark in OVERFLOW_MARKS)


def choose_weakness(logs: list[EvaluationLog], parents_solved: set[str], rng: np.random.Generator) -> Weakness:
    """The weakness this expansion works on (`parents_solved`: instances the parent's parent solved)."""
    failed = [log for log in logs if not _solved(log)]
    special = {
        "empty_patch": [log for log in failed if _empty(log)],
        "context_overflow": [log for log in failed if _overflow(log)],
        "stochastic": [log for log in failed if log.instance_id in parents_solved],
    }
    for kind, seen in special.items():
        if seen and rng.random() < SPECIAL_P:
            return Weakness(kind, seen[int(rng.integers(len(seen)))], len(seen))
    if failed:
        return Weakness("unresolved", failed[int(rng.integers(len(failed)))], len(failed))
    return Weakness("general", None, 0)


WHAT_WENT_WRONG = {
    "empty_patch": "On {count} problem(s) the agent finished without changing any file: an empty patch. Make the "
    "agent reliably produce an edit that addresses the problem before it finishes.",
    "context_overflow": "On {count} problem(s) the agent ran out of its token allowance or its model's context "
    "window before finishing. Make it use fewer tokens: shorter observations, less history, "
    "stopping earlier when stuck.",
    "stochastic": "On {count} problem(s) the agent's own parent version succeeded where this version failed: its "
    "results vary between runs of nearly the same agent. Make it more robust: check its work (for "
    "example run the tests before finishing) and recover from failed steps.",
    "unresolved": "The agent failed this problem ({count} problem(s) failed in all).",
    "general": "The agent solved every problem it was given so far. Make it cheaper and more robust in general.",
}


def _steps_text(steps: tuple[dict, ...]) -> str:
    shown = steps[-STEPS_SHOWN:]
    skipped = len(steps) - len(shown)
    lines = [f"({skipped} earlier steps not shown)"] if skipped else []
    for step in shown:
        action = str(step.get("action", ""))[:EXCERPT]
        result = str(step.get("result", ""))[:EXCERPT]
        lines.append(f"- step {step.get('step', '?')} [{step.get('tool', '?')}] {action}\n  -> {result}")
    return "\n".join(lines) or "(the agent recorded no steps)"


def self_improvement_statement(
    weakness: Weakness,
    agent_files: list[str],
    entry_file: str,
    entry_function: str,
    task_description: str,
    diagnosis: str = "",
    tried: Sequence[tuple[str, str]] = (),
) -> str:
    """The statement the parent agent gets when it is run on its own code."""
    parts = [
        "# Improve this coding agent (it is your own code)",
        f"The workspace holds the source code of a coding agent: {', '.join(agent_files)}. Its entry point "
        f"`{entry_function}(problem)` in {entry_file} is called once per benchmark problem; keep that function's "
        "name and signature. The benchmark, as the agent is told it:",
        task_description.strip(),
        "## What went wrong",
        WHAT_WENT_WRONG[weakness.kind].format(count=weakness.count),
    ]
    if diagnosis:  # asymmetric information (SIA): the reviewer read the log and the history; the agent gets its plan
        parts += ["## Diagnosis (a review of the agent's failures and of the earlier attempts)", diagnosis.strip()]
        return "\n\n".join(parts + _job(entry_file, entry_function))
    log = weakness.log
    if log is not None:
        parts += [
            f"## The log of problem {log.instance_id}",
            "The problem the agent was given:",
            log.statement.strip()[:3000] or "(not recorded)",
            "The agent's steps:",
            _steps_text(log.steps),
            f"How it ended: {log.status}, score {log.score:.2f}. {log.feedback.strip()[:600]}",
        ]
    if tried:  # children already made from this version: a repeat would only be a duplicate
        parts += [
            "## Already tried from this version of the agent (do something different)",
            "\n".join(f"- {what} ({how})" for what, how in tried[-TRIED_SHOWN:]),
        ]
    return "\n\n".join(parts + _job(entry_file, entry_function))


def _job(entry_file: str, entry_function: str) -> list[str]:
    return [
        "## Your job",
        "Make one focused, general improvement to the agent's code (its loop, its tools, its prompts, how it "
        "recovers from errors or checks its work) so that it does better on problems like this one, not only on "
        f"this one. Keep the agent working: every file must compile, {entry_file} must import, and "
        f"`{entry_function}(problem)` must keep its signature; the test command checks that. The benchmark's tests "
        "and grader are not in the workspace: do not look for them.",
    ]


def diagnosis_messages(statement: str, notes: Sequence[tuple[int, str]] = ()) -> list[dict]:
    """DGM's first step: read the log (and the lineage's earlier notes), say what is wrong and what change would fix
    it. The answer is stored as the child's improvement note (SIA's improvement.md)."""
    history = ""
    if notes:
        history = "\n\n## Improvement notes of this lineage (earlier reviews, oldest first)\n\n" + "\n\n".join(
            f"### Note on node {node}\n{text.strip()}" for node, text in notes
        )
    return [
        {
            "role": "system",
            "content": "You review a coding agent's failures and propose one improvement to the "
            "agent's own code. Be concrete and brief.",
        },
        {
            "role": "user",
            "content": statement + history + "\n\nDo not write the code yet. Answer with: 1. what in "
            "the agent's behaviour caused the failure; 2. the one change to its code that "
            "would fix this kind of failure; 3. how to check the change.",
        },
    ]
