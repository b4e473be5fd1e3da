"""Questions about evaluations, instances and reference agents (tables evaluations, instances,
reference_evaluations, and the agents' trajectory_steps).

A node's *mean* here is its own mean score on a split; `dev_node_stats` is the one definition the CLI,
the plots, the report and the live page share.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from archive.reader import Reader, marks
from archive.records import EvaluationRecord, NodeStats, ReferenceEvaluation


def _mean(value: Any) -> float | None:
    return None if value is None else float(value)


class EvaluationReads(Reader):
    # ----- instances -------------------------------------------------------------------------
    def instances(self) -> list[tuple[str, str, dict]]:
        """(id, split, data) of every instance, in the order the run added them (its dev index)."""
        rows = self._rows("SELECT id, split, data FROM instances ORDER BY rowid")
        return [(i, s, json.loads(d)) for i, s, d in rows]

    def n_dev_instances(self) -> int:
        """How many dev instances the run has."""
        return int(self._value("SELECT count(*) FROM instances WHERE split = 'dev'"))

    # ----- whole records -----------------------------------------------------------------------
    def evaluations(self, split: str | None = None) -> list[EvaluationRecord]:
        """Every evaluation (of one split), in the order they finished."""
        sql = (
            'SELECT node_id, instance_id, split, "repeat", score, metrics, status, runtime_s, stdout_tail, '
            "stderr_tail, feedback, worker, started_at, finished_at FROM evaluations"
        )
        params: list[Any] = []
        if split is not None:
            sql += " WHERE split = ?"
            params.append(split)
        rows = self._rows(sql + " ORDER BY finished_at, node_id, instance_id", params)
        return [EvaluationRecord(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]) if r[5] else {}, *r[6:]) for r in rows]

    def references(self) -> list[ReferenceEvaluation]:
        """Every reference agent's result, by agent and instance."""
        rows = self._rows(
            "SELECT agent, instance_id, split, score, metrics, status, runtime_s, feedback "
            "FROM reference_evaluations ORDER BY agent, instance_id"
        )
        return [ReferenceEvaluation(r[0], r[1], r[2], r[3], json.loads(r[4]) if r[4] else {}, *r[5:]) for r in rows]

    # ----- per node --------------------------------------------------------------------------
    def dev_node_stats(self) -> dict[int, NodeStats]:
        """{node: its own dev mean, evaluations and failed ones}, for every node with a dev evaluation."""
        rows = self._rows(
            "SELECT node_id, avg(score), count(*), count(*) FILTER (WHERE status <> 'ok') "
            "FROM evaluations WHERE split = 'dev' GROUP BY node_id"
        )
        return {int(n): NodeStats(float(m), int(c), int(f)) for n, m, c, f in rows}

    def holdout_mean(self, node: int) -> tuple[float | None, int]:
        """(mean, evaluations) of a node on holdout, every repeat counted."""
        mean, n = self._rows(
            "SELECT avg(score), count(*) FROM evaluations WHERE split = 'holdout' AND node_id = ?", [node]
        )[0]
        return _mean(mean), int(n)

    def mean_score(self, node: int, split: str, first_repeat: bool = False) -> float | None:
        """A node's mean score on a split (`first_repeat`: its repeat-0 evaluations only); None without one."""
        repeat = ' AND "repeat" = 0' if first_repeat else ""
        return _mean(
            self._value(f"SELECT avg(score) FROM evaluations WHERE node_id = ? AND split = ?{repeat}", [node, split])
        )

    def evaluated_instances(self, node: int, split: str) -> set[str]:
        """The instances a node has an evaluation of, on a split."""
        rows = self._rows("SELECT instance_id FROM evaluations WHERE node_id = ? AND split = ?", [node, split])
        return {r[0] for r in rows}

    def evaluations_of(self, node: int) -> list[tuple[str, int, str, str, float]]:
        """(instance, repeat, split, status, score) of a node's evaluations: by split, then the run's order of
        instances, then repeat."""
        return self._rows(
            'SELECT e.instance_id, e."repeat", e.split, e.status, e.score FROM evaluations e '
            "LEFT JOIN instances i ON i.id = e.instance_id WHERE e.node_id = ? "
            'ORDER BY e.split, i.rowid, e.instance_id, e."repeat"',
            [node],
        )

    def scores_and_metrics(self, node: int) -> list[tuple[str, float, str | None]]:
        """(split, score, metrics JSON) of each of a node's evaluations."""
        return self._rows("SELECT split, score, metrics FROM evaluations WHERE node_id = ?", [node])

    def worst_evaluations(self, node: int, limit: int) -> list[tuple[str, str, float, str | None, str | None]]:
        """(instance, status, score, feedback, stderr tail) of a node's `limit` lowest-scored dev evaluations
        (a tester's runs, split 'arena', count as dev), lowest first."""
        return self._rows(
            "SELECT instance_id, status, score, feedback, stderr_tail FROM evaluations "
            "WHERE node_id = ? AND split IN ('dev', 'arena') ORDER BY score, instance_id LIMIT ?",
            [node, limit],
        )

    def best_ok_dev_instance(self, node: int) -> str | None:
        """The dev instance a node scored best on among its successful evaluations (first by id on ties)."""
        row = self._row(
            "SELECT instance_id FROM evaluations WHERE node_id = ? AND split = 'dev' AND status = 'ok' "
            "ORDER BY score DESC, instance_id LIMIT 1",
            [node],
        )
        return None if row is None else row[0]

    def dev_scores_by_repeat(self, node: int) -> list[float]:
        """A node's dev scores in repeat order (the seed's: a one-instance run's noise probe)."""
        rows = self._rows(
            "SELECT score FROM evaluations WHERE node_id = ? AND split = 'dev' ORDER BY \"repeat\"", [node]
        )
        return [float(x) for (x,) in rows]

    def first_dev_evaluation_logs(self, node: int) -> list[tuple[str, str, float, str | None, str, str]]:
        """(instance, status, score, metrics JSON, feedback, the instance's statement or prompt) of a node's
        repeat-0 dev evaluations, by instance."""
        return self._rows(
            "SELECT e.instance_id, e.status, e.score, e.metrics, coalesce(e.feedback, ''), "
            "coalesce(i.data->>'statement', i.data->>'prompt', '') FROM evaluations e "
            "JOIN instances i ON i.id = e.instance_id WHERE e.node_id = ? AND e.split = 'dev' AND e.\"repeat\" = 0 "
            "ORDER BY e.instance_id",
            [node],
        )

    def evaluation_steps(self, node: int) -> list[tuple[str, int, str, str, str]]:
        """(instance, step, tool, action, result) of a node's agent's steps in its repeat-0 evaluations."""
        return self._rows(
            "SELECT instance_id, step, tool, action, result FROM trajectory_steps WHERE node_id = ? "
            "AND kind = 'evaluation' AND \"repeat\" = 0 ORDER BY instance_id, step",
            [node],
        )

    # ----- the seed ----------------------------------------------------------------------------
    def seed_dev_record(self) -> list[tuple[str, str, str | None]]:
        """(instance, status, feedback) of the seed's repeat-0 dev evaluations, in the order they finished."""
        return self._rows(
            "SELECT instance_id, status, feedback FROM evaluations WHERE node_id = 0 AND split = 'dev' "
            'AND "repeat" = 0 ORDER BY finished_at'
        )

    def seed_ok_dev_metrics(self) -> list[tuple[str | None, str | None]]:
        """(metrics JSON, feedback) of the seed's successful dev evaluations, by repeat and instance."""
        return self._rows(
            "SELECT metrics, feedback FROM evaluations WHERE node_id = 0 AND split = 'dev' "
            "AND status = 'ok' ORDER BY \"repeat\", instance_id"
        )

    # ----- across nodes ------------------------------------------------------------------------
    def evaluation_status_counts(self, split: str) -> dict[str, int]:
        """{status: evaluations} on a split, statuses in order."""
        rows = self._rows(
            "SELECT status, count(*) FROM evaluations WHERE split = ? GROUP BY status ORDER BY status", [split]
        )
        return {str(status): int(n) for status, n in rows}

    def evaluation_count(self, split: str) -> int:
        """How many evaluations a split has."""
        return int(self._value("SELECT count(*) FROM evaluations WHERE split = ?", [split]))

    def scores_of_split(self, split: str) -> list[tuple[int, float]]:
        """(node, score) of every evaluation on a split, every repeat, in the table's order."""
        return self._rows("SELECT node_id, score FROM evaluations WHERE split = ?", [split])

    def first_dev_scores(self) -> list[tuple[int, str, float]]:
        """(node, instance, score) of every repeat-0 dev evaluation."""
        return self._rows("SELECT node_id, instance_id, score FROM evaluations WHERE split = 'dev' AND \"repeat\" = 0")

    def measured_pairs(self) -> set[tuple[int, str]]:
        """(node, instance) of every repeat-0 dev or holdout evaluation."""
        rows = self._rows(
            "SELECT node_id, instance_id FROM evaluations WHERE split IN ('dev', 'holdout') AND \"repeat\" = 0"
        )
        return {(int(n), str(i)) for n, i in rows}

    def dev_evaluation_order(self, every_repeat: bool) -> list[tuple[int, str, float, datetime | None]]:
        """(node, instance, score, finished_at) of the dev evaluations in the order they finished (repeat 0
        only unless `every_repeat`); those with no finish time last."""
        repeat = "" if every_repeat else ' AND "repeat" = 0'
        return self._rows(
            "SELECT node_id, instance_id, score, finished_at FROM evaluations WHERE split = 'dev'"
            + repeat
            + ' ORDER BY finished_at NULLS LAST, node_id, instance_id, "repeat"'
        )

    def repeated_dev_scores(self) -> list[tuple[int, int, float]]:
        """(node, repeat, score) of every dev evaluation of the nodes measured more than once (the noise
        probe and re-measures), by node and repeat."""
        return self._rows(
            "SELECT node_id, \"repeat\", score FROM evaluations WHERE split = 'dev' AND node_id IN "
            "(SELECT node_id FROM evaluations WHERE split = 'dev' AND \"repeat\" > 0) "
            'ORDER BY node_id, "repeat"'
        )

    def best_fully_measured_node(self) -> int | None:
        """The node with the highest mean repeat-0 dev score among those measured on every dev instance
        (oldest on ties); None when no node is."""
        row = self._row(
            "WITH dev AS (SELECT count(*) AS n FROM instances WHERE split = 'dev'), "
            "means AS (SELECT node_id, avg(score) AS mean, count(DISTINCT instance_id) AS k FROM evaluations "
            "WHERE split = 'dev' AND \"repeat\" = 0 GROUP BY node_id) "
            "SELECT node_id FROM means, dev WHERE k = dev.n ORDER BY mean DESC, node_id LIMIT 1"
        )
        return None if row is None else int(row[0])

    def evaluation_score(self, node: int, split: str, instance: str) -> float | None:
        """A node's score on one instance (the first row found when repeated); None when not evaluated."""
        row = self._row(
            "SELECT score FROM evaluations WHERE node_id = ? AND split = ? AND instance_id = ?", [node, split, instance]
        )
        return None if row is None else float(row[0])

    def nodes_evaluated_on(self, split: str, instance: str) -> set[int]:
        """The nodes with an evaluation of this instance on this split."""
        rows = self._rows("SELECT node_id FROM evaluations WHERE split = ? AND instance_id = ?", [split, instance])
        return {int(n) for (n,) in rows}

    def scores_on_instance(self, instance: str, nodes: Sequence[int]) -> dict[int, float]:
        """{node: score} of these nodes on one instance (any split; the last row read wins when repeated)."""
        if not nodes:
            return {}
        return dict(
            self._rows(
                f"SELECT node_id, score FROM evaluations WHERE instance_id = ? AND node_id IN ({marks(nodes)})",
                [instance, *nodes],
            )
        )

    def evaluations_started_after(self, when: datetime) -> int:
        """How many evaluations started after `when`."""
        return int(self._value("SELECT count(*) FROM evaluations WHERE started_at > ?", [when]))

    # ----- reference agents ----------------------------------------------------------------------
    def reference_agents(self) -> list[str]:
        """The reference agents measured, by name."""
        return [str(name) for (name,) in self._rows("SELECT DISTINCT agent FROM reference_evaluations ORDER BY agent")]

    def reference_scores_and_metrics(self, agent: str) -> list[tuple[str, float, str | None]]:
        """(split, score, metrics JSON) of each of a reference agent's results."""
        return self._rows("SELECT split, score, metrics FROM reference_evaluations WHERE agent = ?", [agent])
