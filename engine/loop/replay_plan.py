"""What a replay follows: the original run's evaluations and expansions, in the order it recorded them.

An `expand` event is written when the child is stored, an `evaluate` event
when the evaluation finished; node ids follow expand events. Walking these in
`seq` order, with every earlier evaluation finished before an expansion, puts
the tree where the original's stood when it stored that child, whatever the
original's workers and timing were.
"""

from __future__ import annotations

from dataclasses import dataclass

from archive import Archive
from engine.mutators import ExpansionFailed, Proposal

OUTCOME_KEYS = ("instance", "score", "status")  # added to an evaluate event by recording it
# added to an expand event by storing the child
STORED_KEYS = ("child", "status", "key", "answer_format", "novelty_below", "recommendations", "prompt")


@dataclass(frozen=True)
class RecordedEvaluation:
    seq: int
    node: int
    instance: str
    detail: dict  # the decision's own detail (rule, sampled values), without its outcome


@dataclass(frozen=True)
class RecordedExpansion:
    seq: int
    parent: int
    child: int
    status: str
    key: str | None  # the LLM mutator's identity of the expansion ("parent 3 child 2"); None otherwise
    answer_format: str | None  # what the model was asked for (recorded since --answer-format auto); None: unsaid
    detail: dict  # the decision's own detail, without what storing the child added
    novelty_below: int | None = None  # --embedding-model: the nodes the novelty check compared with (ids below)
    recommendations: int | None = None  # --meta-recommendations: the version its prompt carried (0: none)
    prompt: int | None = None  # --evolve-prompts: the prompt it was made with


Step = RecordedEvaluation | RecordedExpansion


def read_plan(original: Archive) -> list[Step]:
    """The original's evaluations and expansions in seq order; ValueError when its tree has no such record."""
    steps: list[Step] = []
    for seq, kind, node, detail in original.events():
        if kind == "evaluate":
            assert node is not None  # an evaluation's event names the node evaluated
            steps.append(
                RecordedEvaluation(
                    seq, int(node), str(detail["instance"]), {k: v for k, v in detail.items() if k not in OUTCOME_KEYS}
                )
            )
        elif kind == "expand":
            assert node is not None  # an expansion's event names the parent expanded
            steps.append(
                RecordedExpansion(
                    seq,
                    int(node),
                    int(detail["child"]),
                    str(detail["status"]),
                    detail.get("key"),
                    detail.get("answer_format"),
                    {k: v for k, v in detail.items() if k not in STORED_KEYS},
                    detail.get("novelty_below"),
                    detail.get("recommendations"),
                    detail.get("prompt"),
                )
            )
        elif kind == "restore":
            raise ValueError(
                f"{original.path} was started from a snapshot (--resume-from): the nodes it restored "
                "were not grown by recorded events, so it cannot be replayed"
            )
    return steps


def recorded_child(original: Archive, child: int) -> Proposal | ExpansionFailed:
    """The original's child as its mutator gave it: its files, or (a failed child) the error it stored.

    The error is rebuilt under its recorded type name, so that the replay stores the same reason."""
    node = original.node(child)
    if node is None:
        raise ValueError(f"node {child} is named by an expand event of {original.path} but is not in its nodes")
    status, reason, description = node.status, node.reason, node.description
    if status == "failed":
        name, _, message = (reason or "Exception: mutation failed").partition(": ")
        return ExpansionFailed(type(name if name.isidentifier() else "Exception", (Exception,), {})(message))
    return Proposal(files=original.node_files(child), description=description or "")


def recorded_model(original: Archive, key: str) -> str | None:
    """The model of the expansion's first recorded call: an ensemble draws it with a random state that a
    replay taking the expansions in the original's order does not repeat."""
    return original.first_model_under_key(key)
