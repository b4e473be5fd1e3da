"""Questions about the LLM mutator's own memory: the recommendations scratchpad and the population of prompts
(tables recommendations and prompts, columns nodes.recommendations_version and nodes.prompt_id).

An archive older than these tables, opened read-only, has none of them: each read then answers empty.
"""

from __future__ import annotations

from dataclasses import dataclass

from archive.reader import Reader


@dataclass(frozen=True)
class RecommendationsVersion:
    version: int
    written_at_nodes: int  # nodes in the tree when it was written
    text: str  # the recommendations, one numbered line each
    llm_call_id: int | None  # the llm_calls row that wrote it (in a replay, the original run's)


@dataclass(frozen=True)
class PromptRecord:
    id: int
    parent_id: int | None  # the prompt it was written from; None for the built-in one
    text: str
    written_at_nodes: int
    llm_call_id: int | None


@dataclass(frozen=True)
class PromptStanding:
    """A prompt with what its children did: children made, children measured, their summed improvement."""

    prompt: PromptRecord
    children: int
    measured: int  # children with a dev mean, and a parent with one
    improvement: float  # sum of max(0, child mean - parent mean) over those: the UCB's reward


class PromptReads(Reader):
    def recommendation_versions(self) -> list[RecommendationsVersion]:
        """Every version of the recommendations, oldest first."""
        if not self.has_table("recommendations"):
            return []
        rows = self._rows("SELECT version, written_at_nodes, text, llm_call_id FROM recommendations ORDER BY version")
        return [RecommendationsVersion(int(v), int(n), str(t), c) for v, n, t, c in rows]

    def prompt_records(self) -> list[PromptRecord]:
        """The population of prompts, in id order."""
        if not self.has_table("prompts"):
            return []
        rows = self._rows("SELECT id, parent_id, text, written_at_nodes, llm_call_id FROM prompts ORDER BY id")
        return [PromptRecord(int(i), None if p is None else int(p), str(t), int(n), c) for i, p, t, n, c in rows]

    def prompt_standings(self) -> list[PromptStanding]:
        """Each prompt with its children's record (dev means of the child and of its parent now), in id order."""
        prompts = self.prompt_records()
        if not prompts or not self.has_column("nodes", "prompt_id"):
            return [PromptStanding(p, 0, 0, 0.0) for p in prompts]
        rows = self._rows(
            "WITH m AS (SELECT node_id, avg(score) AS mean FROM evaluations WHERE split = 'dev' GROUP BY node_id) "
            "SELECT c.prompt_id, count(*), count(mc.mean) FILTER (WHERE mp.mean IS NOT NULL), "
            "coalesce(sum(greatest(mc.mean - mp.mean, 0)), 0) FROM nodes c "
            "LEFT JOIN m mc ON mc.node_id = c.id LEFT JOIN m mp ON mp.node_id = c.parent_id "
            "WHERE c.prompt_id IS NOT NULL GROUP BY c.prompt_id"
        )
        record = {int(p): (int(n), int(k), float(s)) for p, n, k, s in rows}
        return [PromptStanding(p, *record.get(p.id, (0, 0, 0.0))) for p in prompts]

    def node_prompt_links(self) -> dict[int, tuple[int | None, int | None]]:
        """{node: (recommendations version, prompt id)} of the nodes that carry either."""
        if not (self.has_column("nodes", "recommendations_version") and self.has_column("nodes", "prompt_id")):
            return {}
        rows = self._rows(
            "SELECT id, recommendations_version, prompt_id FROM nodes "
            "WHERE recommendations_version IS NOT NULL OR prompt_id IS NOT NULL ORDER BY id"
        )
        return {int(n): (v, p) for n, v, p in rows}
