"""The rows the HTML report, the live page and `runs show --node` lay out: nodes with their diffs, every
evaluation with its logs, every model call with its messages, and the agents' trajectories (cut to size).

`about` (a list of node ids) limits a read to those nodes: the live page reads one node when it is clicked.
"""

from __future__ import annotations

from collections.abc import Sequence

from archive.reader import Reader, among

TrajectoryKey = tuple[int, str, "str | None", int]  # (node, kind, instance, repeat)


def _excerpt(text: str | None, full: int | None, limit: int) -> str:
    text = text or ""
    more = (full or 0) - limit
    return f"{text}… [{more:,} more characters]" if more > 0 else text


class ReportReads(Reader):
    def node_report_rows(self, about: Sequence[int] | None = None, diff: bool = True) -> list[tuple]:
        """(id, parent, depth, status, mutator, model, description, reason, diff or '', created_at) in id order."""
        text = "diff" if diff else "''"
        return self._rows(
            "SELECT id, parent_id, depth, status, mutator, model, description, reason, "
            f"{text}, created_at FROM nodes {among('id', about)} ORDER BY id"
        )

    def evaluation_details(self, about: Sequence[int] | None = None) -> list[tuple]:
        """(node, instance, split, repeat, score, status, runtime, feedback, stdout tail, stderr tail, metrics
        JSON, worker, finished_at) of every evaluation: by node, split, the run's order of instances, repeat."""
        return self._rows(
            'SELECT e.node_id, e.instance_id, e.split, e."repeat", e.score, e.status, e.runtime_s, '
            "e.feedback, e.stdout_tail, e.stderr_tail, e.metrics, e.worker, e.finished_at "
            "FROM evaluations e LEFT JOIN instances i ON i.id = e.instance_id "
            f'{among("e.node_id", about)} ORDER BY e.node_id, e.split, i.rowid, e.instance_id, e."repeat"'
        )

    def llm_call_details(self, about: Sequence[int] | None = None) -> list[tuple]:
        """(id, node, purpose, model, request JSON, response JSON, tokens in, tokens out, dollars, latency,
        error, created_at, instance) of every call (of these nodes) in id order; instance None in an archive
        older than the column."""
        instance = "instance_id" if self.has_column("llm_calls", "instance_id") else "NULL"
        return self._rows(
            "SELECT id, node_id, purpose, model, request, response, tokens_in, tokens_out, cost_usd, "
            f"latency_s, error, created_at, {instance} FROM llm_calls {among('node_id', about)} ORDER BY id"
        )

    def evaluation_totals(self) -> list[tuple[str, str, int, float]]:
        """(split, status, evaluations, sandbox seconds) per split and status, in order."""
        return self._rows(
            "SELECT split, status, count(*), coalesce(sum(runtime_s), 0) FROM evaluations "
            "GROUP BY ALL ORDER BY split, status"
        )

    def reference_totals(self) -> tuple[int, float]:
        """(results, sandbox seconds) of the reference agents."""
        row = self._row("SELECT count(*), coalesce(sum(runtime_s), 0) FROM reference_evaluations")
        assert row is not None
        return int(row[0]), float(row[1])

    def evaluation_worker_times(self) -> list[tuple]:
        """(worker or '', started_at, finished_at or else started_at) of every evaluation."""
        return self._rows("SELECT coalesce(worker, ''), started_at, coalesce(finished_at, started_at) FROM evaluations")

    def evaluation_timeline(self) -> list[tuple]:
        """(node, instance, split, score, status, worker, started_at, finished_at) of every evaluation, in the
        order they finished (else started)."""
        return self._rows(
            "SELECT node_id, instance_id, split, score, status, worker, started_at, finished_at "
            "FROM evaluations ORDER BY coalesce(finished_at, started_at), node_id, instance_id"
        )

    def has_trajectories(self) -> bool:
        """Whether any agent's steps are stored (an older archive has no table for them)."""
        return self.has_table("trajectory_steps") and bool(self._value("SELECT count(*) FROM trajectory_steps"))

    def trajectories(
        self, node: int | None, max_steps: int, max_chars: int
    ) -> dict[TrajectoryKey, tuple[list[dict], int]]:
        """{(node, kind, instance, repeat): (first steps, number of steps)}: each trajectory's first `max_steps`
        steps in order, their action and result cut to `max_chars` characters (the cut said in the text), for
        one node or all. Kind 'evaluation': the node's agent on one instance (one per repeat); 'expansion'
        (instance None): the steps its parent took while it edited itself into this node. Empty without the
        table."""
        if not self.has_table("trajectory_steps"):
            return {}
        out: dict[TrajectoryKey, tuple[list[dict], int]] = {}
        for nid, kind, inst, rep, step, tool, action, n_action, result, n_result, t_in, t_out, secs, n in self._rows(
            *_steps_query(node, max_steps, max_chars)
        ):
            steps = out.setdefault((int(nid), str(kind), inst, int(rep)), ([], int(n)))[0]
            steps.append(
                {
                    "step": int(step),
                    "tool": tool or "",
                    "action": _excerpt(action, n_action, max_chars),
                    "result": _excerpt(result, n_result, max_chars),
                    "tokens_in": int(t_in or 0),
                    "tokens_out": int(t_out or 0),
                    "time_s": float(secs or 0.0),
                }
            )
        return out


def _steps_query(node: int | None, max_steps: int, max_chars: int) -> tuple[str, list]:
    where, params = ("WHERE node_id = ?", [int(node)]) if node is not None else ("", [])
    return (
        'SELECT node_id, kind, instance_id, "repeat", step, tool, substr(action, 1, ?), length(action), '
        "substr(result, 1, ?), length(result), tokens_in, tokens_out, time_s, n FROM ("
        'SELECT *, row_number() OVER (PARTITION BY node_id, kind, instance_id, "repeat" ORDER BY step) AS k, '
        'count(*) OVER (PARTITION BY node_id, kind, instance_id, "repeat") AS n '
        f"FROM trajectory_steps {where}) WHERE k <= ? "
        'ORDER BY node_id, kind, instance_id NULLS FIRST, "repeat", step',
        [max_chars, max_chars, *params, max_steps],
    )
