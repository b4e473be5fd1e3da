"""One expansion: mutate a parent into a child, check it, store it.

A child that does not compile, keep the entry point's signature or pass the
pyflakes gate (a name read where nothing binds it) is stored as `invalid`
with the reason; one whose files equal an existing node's is
`invalid` as a duplicate (it would only spend budget re-measuring a known
agent), and so is a near-duplicate of a valid node (engine.mutators.novelty:
the same code up to comments, formatting and names, or nearly the same
tokens), after which the offline mutator is asked again for the same parent
(ShinkaEvolve's code-novelty rejection sampling); a mutator that raises gives a `failed` child. Every outcome is a node,
so the archive shows what the mutator tried. With --embedding-model the LLM mutator checks novelty itself
(an embedding model, re-asking the model) and a proposal carries its verdict (`near_duplicate`).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from archive import NodeRecord
from archive.store import files_hash
from engine.loop.state import RunState
from engine.mutators import MutationContext, Proposal, check_child, new_name_problem

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
    parts = []
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


def mutation_context(state: RunState, parent: int, decision_detail: Mapping | None = None) -> MutationContext:
    """What the mutator may use besides the parent; a decision with context 'archive' (ADAS) widens it."""
    task = state.task
    whole = bool(decision_detail) and decision_detail.get("context") == "archive"
    return MutationContext(
        task.entry_file,
        task.entry_function,
        tuple(task.entry_args),
        donors(state, parent, ARCHIVE_DONORS if whole else DONORS),
        whole_archive=whole,
        operator_credit=state.credit.as_mapping(),
    )


def store_child(
    state: RunState, mutator, parent: int, outcome: Proposal | BaseException, decision_detail: dict
) -> ExpansionResult:
    """Check a proposal (or the mutator's error) and store it as the next node, valid or not."""
    task = state.task
    parent_files = state.files(parent)
    if isinstance(outcome, BaseException):
        files, description = dict(parent_files), "mutation failed"
        status, reason = "failed", f"{type(outcome).__name__}: {outcome}"[:500]
    else:
        files, description = dict(outcome.files), outcome.description
        reason = (
            check_child(files, task.entry_file, task.entry_function, task.entry_args)
            or new_name_problem(parent_files, files)
            or getattr(outcome, "invalid_reason", None)
        )  # e.g. a self-edited agent that fails its smoke run
        if reason is None and state.compile_check is not None and files_hash(files) not in state.code_hashes:
            reason = state.compile_check.problem(files, task.entry_file)  # --compile-check: the compiler's word
        status = "valid" if reason is None else "invalid"
    code_hash = files_hash(files)
    if status == "valid" and code_hash in state.code_hashes:
        status, reason = "invalid", f"duplicate of node {state.code_hashes[code_hash]}"
    if status == "valid":
        if state.embedding_novelty is not None:  # the LLM mutator asked the embedding model already
            reason = getattr(outcome, "near_duplicate", None)
        elif not getattr(mutator, "novelty_check", True):
            reason = None  # a self-edit of a whole agent is a small change to much code: only exact duplicates count
        else:
            reason = state.near_duplicate(files)
        status = "valid" if reason is None else "invalid"
    node_id = state.tree.n
    record = NodeRecord(
        id=node_id,
        parent_id=parent,
        depth=int(state.tree.depth[parent]) + 1,
        status=status,
        mutator=mutator.name,
        model=getattr(outcome, "model", None) or mutator.model,
        diff=unified_diff(parent_files, files),
        code_hash=code_hash,
        reason=reason or "",
        description=description,
        note=getattr(outcome, "note", "") or "",
        role=state.role,
    )
    detail = {**decision_detail, "child": node_id, "status": status}
    if getattr(outcome, "key", None):
        detail["key"] = outcome.key  # the expansion's identity, for a resumed run's bookkeeping
    if getattr(outcome, "answer_format", None):
        detail["answer_format"] = outcome.answer_format  # what was asked for, for a replay to ask the same
    if getattr(outcome, "novelty_below", None):
        detail["novelty_below"] = outcome.novelty_below  # the nodes its novelty check saw, for a replay
    event = ("expand", parent, detail)
    state.archive.add_node(record, files, event=event, steps=getattr(outcome, "trajectory", ()))
    state.tree.add_node(parent, status == "valid", feature=float(code_size(files)))
    state.credit.child_stored(node_id, parent, description, status == "valid")
    state.code_hashes.setdefault(code_hash, node_id)
    if status == "valid":
        state.remember_files(node_id, files)
        state.admitted(node_id, files)
    return ExpansionResult(node_id, status, reason or "", description)


def expand(state: RunState, mutator, parent: int, rng: np.random.Generator, decision_detail: dict) -> ExpansionResult:
    """A synchronous mutator (the offline one): propose and store at once. A near-duplicate child is stored
    invalid and the mutator asked again for the same parent, up to NEAR_DUPLICATE_RETRIES times."""
    for attempt in range(NEAR_DUPLICATE_RETRIES + 1):
        try:
            outcome: Proposal | BaseException = mutator.propose(
                state.files(parent), mutation_context(state, parent, decision_detail), rng
            )
        except Exception as exc:  # a mutator bug or a model's garbage must not end the run
            outcome = exc
        detail = decision_detail if attempt == 0 else {**decision_detail, "asked_again": attempt}
        result = store_child(state, mutator, parent, outcome, detail)
        if not result.reason.startswith(NEAR_DUPLICATE):
            return result
    return result
