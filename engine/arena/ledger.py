"""What an arena run's archive says: rounds, populations, who made what, and each node's three scores.

Pure reads (SQL over the public tables), shared by the rounds, the summary,
the HTML report and scripts/plot_arena.py, so every one of them agrees:
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

import json
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


def tester_root(archive) -> int | None:
    rows = archive.query("SELECT min(id) FROM nodes WHERE role = 'tester' AND parent_id IS NULL")
    return None if rows[0][0] is None else int(rows[0][0])


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


def status_of(archive, node: int) -> str:
    return str(archive.query("SELECT status FROM nodes WHERE id = ?", [node])[0][0])


def evaluated(archive) -> set[tuple[int, str]]:
    return {
        (int(n), str(i))
        for n, i in archive.query(
            "SELECT node_id, instance_id FROM evaluations WHERE split IN ('dev', 'holdout') AND \"repeat\" = 0"
        )
    }


def spent(archive) -> int:
    """The arena's budget count: code agents' dev evaluations in rounds plus testers' runs (the finale's
    evaluations, rule 'arena finale', are outside it; each evaluation's event is written with it)."""
    return int(
        archive.query(
            "SELECT count(*) FROM events WHERE kind = 'evaluate' AND detail->>'rule' IN ('arena', 'arena tester')"
        )[0][0]
    )


def dev_mean(archive, node: int, up_to_round: int | None = None) -> float | None:
    """A code agent's mean dev score, over the instances existing as of `up_to_round` (None: all)."""
    where = "" if up_to_round is None else " AND (i.origin = 'task' OR i.arena_round <= ?)"
    params = [node] if up_to_round is None else [node, up_to_round]
    row = archive.query(
        "SELECT avg(e.score) FROM evaluations e JOIN instances i ON i.id = e.instance_id "
        f"WHERE e.node_id = ? AND e.split = 'dev' AND e.\"repeat\" = 0{where}",
        params,
    )
    return None if row[0][0] is None else float(row[0][0])


def tester_mean(archive, node: int) -> float | None:
    row = archive.query("SELECT avg(score) FROM evaluations WHERE node_id = ? AND split = 'arena'", [node])
    return None if row[0][0] is None else float(row[0][0])


def round_instances(archive, arena_round: int, testers: list[int]) -> dict[int, str]:
    """{tester: its instance of this round} for the testers whose confirmed proposals made one."""
    if not testers:
        return {}
    marks = ", ".join("?" * len(testers))
    return {
        int(t): str(i)
        for i, t in archive.query(
            "SELECT id, tester_id FROM instances WHERE origin = 'arena' AND arena_round = ? AND "
            f"tester_id IN ({marks})",
            [arena_round, *testers],
        )
    }


def proposals_of(archive, tester: int, arena_round: int) -> list[tuple[object, bool, str | None]]:
    return [
        (json.loads(p), bool(a), r)
        for p, a, r in archive.query(
            "SELECT proposal, accepted, reason FROM arena_proposals WHERE tester_id = ? AND "
            "arena_round = ? ORDER BY item",
            [tester, arena_round],
        )
    ]


def node_scores(archive) -> list[NodeScores]:
    """Every node's original, evolved and holdout means (code agents) or tester mean, in node order."""
    rows = archive.query("""
        SELECT n.id, coalesce(n.role, 'agent'), n.status,
               avg(e.score) FILTER (WHERE e.split = 'dev' AND coalesce(i.origin, 'task') = 'task'),
               avg(e.score) FILTER (WHERE e.split = 'dev'),
               avg(e.score) FILTER (WHERE e.split = 'holdout'),
               avg(e.score) FILTER (WHERE e.split = 'arena'),
               count(e.score) FILTER (WHERE e.split = 'dev')
        FROM nodes n
        LEFT JOIN evaluations e ON e.node_id = n.id AND e."repeat" = 0
        LEFT JOIN instances i ON i.id = e.instance_id
        GROUP BY n.id, n.role, n.status ORDER BY n.id""")
    return [
        NodeScores(int(n), role, status, *(None if v is None else float(v) for v in (o, ev, h, t)), int(m))
        for n, role, status, o, ev, h, t, m in rows
    ]


def instance_counts(archive) -> dict[str, int]:
    """How many dev instances the task brought, how many the testers added, and how many holdout ones."""
    rows = dict(
        archive.query(
            "SELECT CASE WHEN split = 'holdout' THEN 'holdout' ELSE coalesce(origin, 'task') END, "
            "count(*) FROM instances GROUP BY 1"
        )
    )
    return {
        "task": int(rows.get("task", 0)),
        "arena": int(rows.get("arena", 0)),
        "holdout": int(rows.get("holdout", 0)),
    }
