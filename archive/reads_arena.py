"""Questions about an arena run's tables (`--arena`): the testers' population (nodes.role 'tester'), the
instances their confirmed proposals made (instances.origin 'arena', with tester_id and arena_round), and
arena_proposals. engine/arena/ledger.py gives the answers their meaning (original, evolved, holdout scores).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from archive.reader import Reader, marks


class ArenaReads(Reader):
    def tester_root(self) -> int | None:
        """The testers' root node (None until it is planted)."""
        value = self._value("SELECT min(id) FROM nodes WHERE role = 'tester' AND parent_id IS NULL")
        return None if value is None else int(value)

    def arena_dev_mean(self, node: int, up_to_round: int | None = None) -> float | None:
        """A node's mean repeat-0 dev score over the task's instances and those the testers added up to
        round `up_to_round` (None: every round); None without a score."""
        where = "" if up_to_round is None else " AND (i.origin = 'task' OR i.arena_round <= ?)"
        params = [node] if up_to_round is None else [node, up_to_round]
        value = self._value(
            "SELECT avg(e.score) FROM evaluations e JOIN instances i ON i.id = e.instance_id "
            f"WHERE e.node_id = ? AND e.split = 'dev' AND e.\"repeat\" = 0{where}",
            params,
        )
        return None if value is None else float(value)

    def arena_round_instances(self, arena_round: int, testers: Sequence[int]) -> dict[int, str]:
        """{tester: the instance its confirmed proposals made in this round} for these testers."""
        if not testers:
            return {}
        rows = self._rows(
            "SELECT id, tester_id FROM instances WHERE origin = 'arena' AND arena_round = ? AND "
            f"tester_id IN ({marks(testers)})",
            [arena_round, *testers],
        )
        return {int(t): str(i) for i, t in rows}

    def arena_proposals_of(self, tester: int, arena_round: int) -> list[tuple[object, bool, str | None]]:
        """(proposal, accepted, why refused) of a tester's proposals in a round, in order."""
        rows = self._rows(
            "SELECT proposal, accepted, reason FROM arena_proposals WHERE tester_id = ? AND "
            "arena_round = ? ORDER BY item",
            [tester, arena_round],
        )
        return [(json.loads(p), bool(a), r) for p, a, r in rows]

    def arena_round_testers(self, arena_round: int) -> list[int]:
        """The testers that made proposals in a round."""
        rows = self._rows("SELECT DISTINCT tester_id FROM arena_proposals WHERE arena_round = ?", [arena_round])
        return [int(n) for (n,) in rows]

    def arena_score_rows(
        self,
    ) -> list[tuple[int, str, str, float | None, float | None, float | None, float | None, int]]:
        """(node, role, status, mean on the task's dev instances, on every dev instance, on holdout, on its
        arena runs, dev instances scored) of every node in id order, from repeat-0 evaluations."""
        return self._rows("""
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

    def instance_counts_by_origin(self) -> dict[str, int]:
        """{'task' | 'arena' | 'holdout': instances}: dev instances by origin, and holdout ones."""
        rows = self._rows(
            "SELECT CASE WHEN split = 'holdout' THEN 'holdout' ELSE coalesce(origin, 'task') END, "
            "count(*) FROM instances GROUP BY 1"
        )
        return {str(k): int(v) for k, v in rows}
