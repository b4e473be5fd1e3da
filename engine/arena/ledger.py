"""What an arena run's archive says: rounds, populations, who made what, and each node's three scores.

Pure reads (the archive's named questions, archive/reads_arena.py, given
their meaning here), shared by the rounds, the summary, the HTML report and
scripts/plot_arena.py, so every one of them agrees:
- a code agent's *original* score is its mean over the task's own dev
  instances (`instances.origin = 'task'`), its *evolved* score the mean over
  every dev instance, the testers' confirmed ones included, and its
  *holdout* score the mean over holdout (fixed, never grown, never shown);
- an evolved score "as of round R" counts only the instances that existed
  then (the task's and those of rounds up to R);
- a tester's score is its mean over its runs (evaluations of split 'arena').
A mean is None until the node has a score on that set.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NodeScores:
    node: int
    role: str
    status: str
    original: float | None
    evolved: float | None
    holdout: float | None
    tester: float | None  # a tester's mean score (share of top agents its tests broke)
    measured: int  # dev instances this node has a score on


def is_arena(archive) -> bool:
    return bool(archive.config().get("arena"))


def rounds(archive) -> list[dict]:
    """The finished rounds' records (`arena_round` events), in order."""
    return [detail for _, kind, _, detail in archive.events("arena_round")]


def made_in_round(archive, role: str, arena_round: int, parent: int, why: str) -> list[int]:
    """Children of `role` made in this round of this parent for this purpose (`why`: offspring, fill,
    replace), in order: a resumed round reuses them."""
    made = []
    for _, _, node_parent, detail in archive.events("expand"):
        if (
            detail.get("arena_round") == arena_round
            and detail.get("role") == role
            and node_parent == parent
            and detail.get("why") == why
        ):
            made.append(int(detail["child"]))
    return made


def spent(archive) -> int:
    """The arena's budget count: code agents' dev evaluations in rounds plus testers' runs (the finale's
    evaluations, rule 'arena finale', are outside it; each evaluation's event is written with it)."""
    return archive.evaluate_event_counts(("arena", "arena tester"))[0]


def dev_mean(archive, node: int, up_to_round: int | None = None) -> float | None:
    """A code agent's mean dev score, over the instances existing as of `up_to_round` (None: all)."""
    return archive.arena_dev_mean(node, up_to_round)


def node_scores(archive) -> list[NodeScores]:
    """Every node's original, evolved and holdout means (code agents) or tester mean, in node order."""
    return [
        NodeScores(int(n), role, status, _number(o), _number(ev), _number(h), _number(t), int(m))
        for n, role, status, o, ev, h, t, m in archive.arena_score_rows()
    ]


def _number(value: float | None) -> float | None:
    return None if value is None else float(value)


def instance_counts(archive) -> dict[str, int]:
    """How many dev instances the task brought, how many the testers added, and how many holdout ones."""
    rows = archive.instance_counts_by_origin()
    return {
        "task": int(rows.get("task", 0)),
        "arena": int(rows.get("arena", 0)),
        "holdout": int(rows.get("holdout", 0)),
    }
