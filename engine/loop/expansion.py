"""One expansion: mutate a parent into a child, check it, store it.

A child that does not compile, keep the entry point's signature or pass the
pyflakes gate (a name read where nothing binds it) is stored as `invalid`
with the reason; one whose files equal an existing node's is
`invalid` as a duplicate (it would only spend budget re-measuring a known
agent), and so is a near-duplicate of a valid node (engine.mutators.novelty:
the same code up to comments, formatting and names, or nearly the same
tokens), after which the offline mutator is asked again for the same parent
(ShinkaEvolve's code-novelty rejection sampling); a mutator that raises gives a `failed` child (its
`ExpansionFailed`, engine.mutators.base). Every outcome is a node, so the archive shows what the mutator
tried. With --embedding-model the LLM mutator checks novelty itself (an embedding model, re-asking the
model) and a proposal carries its verdict (`near_duplicate`).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from archive import NodeRecord
from archive.store import files_hash
from engine.errors import StopRun
from engine.loop.state import RunState
from engine.mutators import (
    NOT_PINNED,
    ExpansionFailed,
    MutationContext,
    Mutator,
    Pinned,
    Proposal,
    SyncMutator,
    check_child,
    new_name_problem,
)

DONORS = 2
NEAR_DUPLICATE = "near-duplicate of node"  # engine.mutators.novelty's reasons start so
NEAR_DUPLICATE_RETRIES = 3  # ShinkaEvolve's novelty rejection sampling asks again a few times
ARCHIVE_DONORS = 12  # when the policy shows the meta-agent the archive (ADAS): its best agents


@dataclass(frozen=True)
class ExpansionResult:
    node_id: int
    status: str
    reason: str
    description: str


def code_size(files: Mapping[str, str]) -> int:
    """An agent's code size in bytes (UTF-8, all files): the feature axis of OpenEvolve's MAP-Elites grid."""
    return sum(len(text.encode()) for text in files.values())


def unified_diff(parent: Mapping[str, str], child: Mapping[str, str]) -> str:
    parts: list[str] = []
    for path in sorted(set(parent) | set(child)):
        before, after = parent.get(path, ""), child.get(path, "")
        if before != after:
            parts.extend(
                difflib.unified_diff(before.splitlines(True), after.splitlines(True), f"a/{path}", f"b/{path}")
            )
    return "".join(parts)


def donors(state: RunState, parent: int, count: int = DONORS) -> tuple[dict[str, str], ...]:
    """The best other valid nodes by own mean dev score, for crossover."""
    view = state.tree
    n = view.n
    candidates = np.flatnonzero(view.valid[:n] & (view.n_evals[:n] > 0))
    candidates = candidates[candidates != parent]
    if len(candidates) == 0:
        return ()
    means = view.mean(candidates)
    order = candidates[np.argsort(-means, kind="stable")][:count]
    return tuple(state.files(int(node)) for node in order)


def mutation_context(
    state: RunState, parent: int, decision_detail: Mapping | None = None, pinned: Pinned = NOT_PINNED
) -> MutationContext:
    """What the mutator may use besides the parent; a decision with context 'archive' (ADAS) widens it.
    `pinned`: what a resumed or replayed expansion repeats."""
    task = state.task
    whole = decision_detail is not None and decision_detail.get("context") == "archive"
    return MutationContext(
        task.entry_file,
        task.entry_function,
        tuple(task.entry_args),
        donors(state, parent, ARCHIVE_DONORS if whole else DONORS),
        whole_archive=whole,
        operator_credit=state.credit.as_mapping(),
        parent=parent,
        pinned=pinned,
    )


def store_child(
    state: RunState, mutator: Mutator, parent: int, outcome: Proposal | ExpansionFailed, decision_detail: dict
) -> ExpansionResult:
    """Check a proposal (or the mutator's failure) and store it as the next node, valid or not."""
    parent_files = state.files(parent)
    reason: str | None
    if isinstance(outcome, ExpansionFailed):
        files, description, status, reason = dict(parent_files), "mutation failed", "failed", outcome.reason
        note = ""
    else:
        files, description, note = dict(outcome.files), outcome.description, outcome.note
        reason = child_problem(state, mutator, parent_files, outcome)
        status = "valid" if reason is None else "invalid"
    code_hash = files_hash(files)
    node_id = state.tree.n
    record = NodeRecord(
        id=node_id,
        parent_id=parent,
        depth=int(state.tree.depth[parent]) + 1,
        status=status,
        mutator=mutator.name,
        model=outcome.model or mutator.model,
        diff=unified_diff(parent_files, files),
        code_hash=code_hash,
        reason=reason or "",
        description=description,
        note=note,
        role=state.role,
        recommendations_version=outcome.recommendations_version or None,
        prompt_id=outcome.prompt_id,
    )
    detail = {**decision_detail, "child": node_id, "status": status, **_what_it_asked(outcome)}
    state.archive.add_node(record, files, event=("expand", parent, detail), steps=outcome.trajectory)
    spawned = decision_detail.get("island_spawn")
    if spawned is not None:  # the first expansion of an island spawned on stagnation (search/openevolve.py)
        announce_island(state, spawned)
    state.tree.add_node(parent, status == "valid", feature=float(code_size(files)))
    state.credit.child_stored(node_id, parent, description, status == "valid")
    state.code_hashes.setdefault(code_hash, node_id)
    if status == "valid":
        state.remember_files(node_id, files)
        state.admitted(node_id, files)
    return ExpansionResult(node_id, status, reason or "", description)


def announce_island(state: RunState, spawned: dict) -> None:
    """The `island_spawn` event of a new island, once (several expansions in flight may each carry it)."""
    if all(detail.get("island") != spawned.get("island") for *_, detail in state.archive.events("island_spawn")):
        state.archive.add_event("island_spawn", spawned.get("seed"), spawned)


def child_problem(state: RunState, mutator: Mutator, parent_files: Mapping[str, str], proposal: Proposal) -> str | None:
    """Why a proposed child is stored invalid, else None: it does not load or keep the entry point, the
    mutator's own check failed (a self-edit's smoke run), the compiler refuses it (--compile-check), it
    repeats a node's files, or it is a near-duplicate of a valid node's code."""
    task, files = state.task, dict(proposal.files)
    code_hash = files_hash(files)
    reason = (
        check_child(files, task.entry_file, task.entry_function, task.entry_args)
        or new_name_problem(parent_files, files)
        or proposal.invalid_reason
    )
    if reason is None and state.compile_check is not None and code_hash not in state.code_hashes:
        reason = state.compile_check.problem(files, task.entry_file)  # --compile-check: the compiler's word
    if reason is not None:
        return reason
    if code_hash in state.code_hashes:
        return f"duplicate of node {state.code_hashes[code_hash]}"
    if state.embedding_novelty is not None:  # the LLM mutator asked the embedding model already
        return proposal.near_duplicate
    if not mutator.novelty_check:
        return None  # a self-edit of a whole agent is a small change to much code: only exact duplicates count
    return state.near_duplicate(files)


def _what_it_asked(outcome: Proposal | ExpansionFailed) -> dict[str, object]:
    """What the expand event keeps of the expansion: its identity (a resumed run's bookkeeping), what the model
    was asked for and the nodes its novelty check saw (for a replay to ask the same), and the attempts the
    offline mutator's own check threw away, per operator (`gate_rejected`, when any)."""
    novelty_below = outcome.novelty_below if isinstance(outcome, Proposal) else None
    asked = (("key", outcome.key), ("answer_format", outcome.answer_format), ("novelty_below", novelty_below))
    prompts = (("recommendations", outcome.recommendations_version), ("prompt", outcome.prompt_id))
    if isinstance(outcome, Proposal):
        rejected = dict(outcome.gate_rejected)
    else:
        rejected = dict(getattr(outcome.cause, "gate_rejected", None) or {})
    said = {name: value for name, value in asked if value} | {n: v for n, v in prompts if v is not None}
    return said | ({"gate_rejected": rejected} if rejected else {})


def expand(
    state: RunState, mutator: SyncMutator, parent: int, rng: np.random.Generator, decision_detail: dict
) -> ExpansionResult:
    """A synchronous mutator (the offline one): propose and store at once. A near-duplicate child is stored
    invalid and the mutator asked again for the same parent, up to NEAR_DUPLICATE_RETRIES times. A `StopRun`
    the mutator raises goes to the caller, nothing stored."""
    for attempt in range(NEAR_DUPLICATE_RETRIES + 1):
        try:
            outcome: Proposal | ExpansionFailed = mutator.propose(
                state.files(parent), mutation_context(state, parent, decision_detail), rng
            )
        except StopRun:
            raise
        except Exception as exc:  # a mutator bug or a model's garbage must not end the run
            outcome = ExpansionFailed.of(exc)
        detail = decision_detail if attempt == 0 else {**decision_detail, "asked_again": attempt}
        result = store_child(state, mutator, parent, outcome, detail)
        if not result.reason.startswith(NEAR_DUPLICATE):
            return result
    return result
