"""Questions a training-trace export asks (engine/runinfo/traces.py): the children, the calls that made them,
their files and scores, each in one query.

An expansion's calls are linked to its child through the expansion key: the LLM mutator writes
`parent P child K` (followed by ` attempt N` or ` diagnose`) into each request it sends, and the `expand`
event that stored the child keeps that key with the child's id (engine/loop/expansion.py); `--mutator self`
writes `self parent P child K` the same way, and its agent's gateway calls carry it inside their own keys.
A child made without a model (the offline mutator) has no key and no calls.

The idea of exporting them follows OpenEvolve's evolution traces (`openevolve/evolution_trace.py`: the
prompt, the answer, parent and child programs and the score change, for reinforcement-learning data).
"""

from __future__ import annotations

import json

from archive.reader import Reader, among
from archive.records import LLMCallRecord

# an expansion's key inside a call's key: `parent P child K attempt N` and `... diagnose` (the LLM mutator's),
# `self parent P child K ...` (--mutator self's), and a gateway call of that expansion's agent,
# `self_improve self parent P child K call N` (engine/gateway/sessions.py)
_EXPANSION_KEY = r"(?:^| )((?:self )?parent \d+ child \d+)(?: |$)"


class TraceReads(Reader):
    def mutated_children(self) -> list[tuple[int, int, str, str, str, str | None, str, str, str | None]]:
        """(id, parent, status, reason, mutator, model, diff, description, expansion key or None) of every node a
        mutator made (every node with a parent), in id order."""
        rows = self._rows(
            "WITH made AS (SELECT TRY_CAST(detail->>'child' AS BIGINT) AS child, "
            "min(detail->>'key') AS key FROM events WHERE kind = 'expand' GROUP BY 1) "
            "SELECT n.id, n.parent_id, n.status, coalesce(n.reason, ''), n.mutator, n.model, coalesce(n.diff, ''), "
            "coalesce(n.description, ''), made.key FROM nodes n LEFT JOIN made ON made.child = n.id "
            "WHERE n.parent_id IS NOT NULL ORDER BY n.id"
        )
        return [(int(n), int(p), s, r, m, model, d, t, k) for n, p, s, r, m, model, d, t, k in rows]

    def expansion_calls(self) -> dict[str, list[LLMCallRecord]]:
        """{expansion key (`parent P child K`, `self parent P child K`): the calls made for that expansion, failed
        ones included, in id order}."""
        rows = self._rows(
            "WITH keyed AS (SELECT regexp_extract(request->>'key', ?, 1) AS expansion, * FROM llm_calls) "
            "SELECT expansion, id, node_id, purpose, model, request_hash, request, response, tokens_in, tokens_out, "
            "cost_usd, latency_s, error FROM keyed WHERE expansion <> '' ORDER BY id",
            [_EXPANSION_KEY],
        )
        out: dict[str, list[LLMCallRecord]] = {}
        for expansion, n, node, purpose, model, digest, request, response, t_in, t_out, cost, latency, error in rows:
            call = LLMCallRecord(
                int(n),
                node,
                purpose,
                model,
                digest,
                json.loads(request) if request else {},
                json.loads(response) if response else None,
                int(t_in or 0),
                int(t_out or 0),
                cost,
                float(latency or 0.0),
                error,
            )
            out.setdefault(str(expansion), []).append(call)
        return out

    def files_of_nodes(self, ids: list[int] | None = None) -> dict[int, dict[str, str]]:
        """{node: {path: text}} of these nodes (None: every node), one query."""
        rows = self._rows(
            "SELECT f.node_id, f.path, b.content FROM node_files f JOIN blobs b ON b.hash = f.hash "
            f"{among('f.node_id', ids)} ORDER BY f.node_id, f.path"
        )
        out: dict[int, dict[str, str]] = {}
        for node, path, content in rows:
            out.setdefault(int(node), {})[path] = content
        return out

    def holdout_means(self) -> dict[int, float]:
        """{node: its mean holdout score, every repeat counted} of every node with a holdout evaluation."""
        rows = self._rows("SELECT node_id, avg(score) FROM evaluations WHERE split = 'holdout' GROUP BY node_id")
        return {int(n): float(m) for n, m in rows}
