"""`--meta-recommendations N`: a scratchpad of recommendations that a model rewrites every N expansions.

ShinkaEvolve (Lange et al. 2025, arXiv 2509.19349; `meta_rec_interval`, shinka/core/summarizer.py) has an
LLM read the recent programs and their results every few generations and write a handful of
recommendations that go into the next mutation prompts. Here one call (purpose `meta`) reads the
archive's most recent and best nodes (what each changed, a diff stat, its dev mean beside its parent's,
its status and reason, its weakest feedback, its improvement note) and the recommendations in force, and
answers with a numbered list; the first K items (`--meta-recommendations-max`) are the new version. Each
version is a row of `recommendations` with the node count when it was written and its llm_calls id, and
every child records the version its prompt carried (`nodes.recommendations_version`; NULL: none yet).
When the call fails or its answer holds no item, the version in force stays until the next boundary.
How a call is due, resumed and replayed: engine/mutators/periodic.py.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass

from engine.errors import StopRun
from engine.mutators.periodic import Ask, Boundaries, children_stored
from engine.mutators.prompt import render_recommendations

RECENT = 8  # the most recent children shown
BEST = 4  # the best measured nodes shown
MAX_ITEM_CHARS = 600  # one recommendation, at most
MAX_TASK_CHARS = 3_000
PURPOSE = "meta"

_NUMBERED = re.compile(r"^\s*(?:\*\*)?\d{1,2}[.)](?:\*\*)?\s+(.*\S)")
_BULLET = re.compile(r"^\s*[-*•]\s+(.*\S)")


@dataclass(frozen=True)
class NodeDigest:
    """One node as the review sees it: short, no code beyond a diff stat."""

    node: int
    parent: int | None
    status: str
    mean: float | None  # dev mean (None: not measured yet)
    n_evals: int
    parent_mean: float | None
    description: str
    diff_stat: str  # "+3 -1 lines"
    reason: str  # why invalid or failed
    weakest: str  # its lowest-scored dev evaluation, in one line
    note: str  # the first line of its improvement note


@dataclass(frozen=True)
class Scratch:
    """The recommendations in force: their version (0: none yet) and items."""

    version: int
    items: tuple[str, ...]


NONE = Scratch(0, ())


def parse_recommendations(text: str, limit: int) -> list[str]:
    """The items of a numbered list (an item's indented lines joined to it); without one, of a bulleted list;
    without either, the answer's non-empty lines. At most `limit`, each at most MAX_ITEM_CHARS."""
    for pattern in (_NUMBERED, _BULLET):
        items: list[str] = []
        for line in text.splitlines():
            match = pattern.match(line)
            if match:
                items.append(match.group(1).strip())
            elif items and line.strip() and line[:1].isspace():
                items[-1] = f"{items[-1]} {line.strip()}"
        if items:
            break
    else:
        items = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    return [_clip(item) for item in items if item][:limit]


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_ITEM_CHARS else text[: MAX_ITEM_CHARS - 3] + "..."


def diff_stat(diff: str) -> str:
    """'+3 -1 lines' of a unified diff (its file headers not counted)."""
    added = sum(1 for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in diff.splitlines() if line.startswith("-") and not line.startswith("---"))
    return f"+{added} -{removed} lines"


def render_digest(d: NodeDigest) -> str:
    """A node in two to four lines."""
    score = "not measured" if d.mean is None else f"dev mean {d.mean:.4f} over {d.n_evals}"
    against = "" if d.parent_mean is None or d.mean is None else f" (parent {d.parent_mean:.4f})"
    origin = "seed" if d.parent is None else f"child of {d.parent}"
    lines = [f"- node {d.node} ({origin}), {d.status}, {score}{against}: {d.description or '-'} [{d.diff_stat}]"]
    if d.reason:
        lines.append(f"  why {d.status}: {d.reason[:300]}")
    if d.weakest:
        lines.append(f"  weakest dev result: {d.weakest[:300]}")
    if d.note:
        lines.append(f"  its plan: {d.note[:300]}")
    return "\n".join(lines)


def build_recommendation_prompt(
    task_description: str, recent: list[NodeDigest], best: list[NodeDigest], current: Scratch, limit: int
) -> list[dict]:
    """[system, user] messages asking for at most `limit` recommendations, as a numbered list."""
    system = (
        "You review an automated search that improves a program (an agent scored on a task's instances) by "
        "small model-written edits. From the evidence below, write recommendations for the next edits: "
        "concrete ideas to try, and what to stop doing, each grounded in what the results show. They will be "
        "shown to the programmer model with every parent it edits, so make them general, not about one node."
    )
    task = task_description.strip()
    if len(task) > MAX_TASK_CHARS:
        task = task[:MAX_TASK_CHARS] + f"\n[... {len(task) - MAX_TASK_CHARS} more characters]"
    parts = [f"# Task\n{task}"]
    parts.append("# The best agents so far\n" + ("\n".join(map(render_digest, best)) or "(none measured yet)"))
    parts.append("# The most recent children, newest last\n" + ("\n".join(map(render_digest, recent)) or "(none)"))
    if current.items:
        in_force = render_recommendations(current.items)
        parts.append(f"# The recommendations in force (version {current.version})\n{in_force}")
    parts.append(
        f"# Your answer\nAt most {limit} recommendations, as a numbered list (`1. ...`), one or two sentences each, "
        "and nothing else. Keep those in force that still hold, drop those the results contradict."
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]


def digests(state, nodes: list[int]) -> list[NodeDigest]:
    """What the review is shown of these nodes, from the archive and the tree."""
    tree, archive = state.tree, state.archive
    notes = archive.node_notes(nodes)
    out = []
    for n in nodes:
        record = archive.node(n)
        if record is None:
            continue
        parent = record.parent_id
        worst = archive.worst_evaluations(n, 1)
        weakest = ""
        if worst:
            instance, status, score, feedback, _ = worst[0]
            weakest = f"{instance} {status} score {score:.3f}" + (f": {feedback}" if feedback else "")
        note = (notes.get(n) or "").strip().splitlines()
        out.append(
            NodeDigest(
                n,
                parent,
                record.status,
                _mean(tree, n),
                int(tree.n_evals[n]),
                None if parent is None else _mean(tree, int(parent)),
                record.description or "",
                diff_stat(record.diff or ""),
                record.reason or "",
                " ".join(weakest.split()),
                note[0] if note else "",
            )
        )
    return out


def _mean(tree, node: int) -> float | None:
    return tree.mean(node) if int(tree.n_evals[node]) else None


def recent_and_best(state) -> tuple[list[int], list[int]]:
    """The RECENT newest children (oldest first), and the BEST measured valid nodes by dev mean (best first)."""
    tree = state.tree
    n = int(tree.n)
    recent = list(range(max(1, n - RECENT), n))
    measured = [i for i in range(n) if tree.valid[i] and int(tree.n_evals[i]) > 0]
    best = sorted(measured, key=lambda i: (-tree.mean(i), i))[:BEST]
    return recent, best


class Scratchpad:
    """The recommendations in force for each expansion, rewritten every `every` children by one model call."""

    def __init__(self, state, ask: Ask, *, every: int, limit: int) -> None:
        self.state = state
        self._ask = ask
        self.limit = limit
        self._boundaries = Boundaries(every)
        self._lock = asyncio.Lock()

    def versions(self) -> dict[int, Scratch]:
        return {
            v.version: Scratch(v.version, tuple(parse_recommendations(v.text, self.limit)))
            for v in self.state.archive.recommendation_versions()
        }

    def latest(self) -> Scratch:
        versions = self.versions()
        return versions[max(versions)] if versions else NONE

    async def for_expansion(self, pinned: int | None = None) -> Scratch:
        """The recommendations this expansion's prompt carries: a replayed expansion's recorded version
        (`pinned`; 0: none), else the latest, written first when a boundary is due."""
        async with self._lock:  # expansions in flight at once: one writes, the others wait and read it
            await self._write_if_due()  # a replay writes as the original did: a version it pins is stored by then
        return self.latest() if pinned is None else self.versions().get(pinned, NONE)

    async def _write_if_due(self) -> None:
        boundary = self._boundaries.due(children_stored(self.state))
        if boundary is None:
            return
        current = self.latest()
        recent, best = recent_and_best(self.state)
        messages = build_recommendation_prompt(
            self.state.task.description, digests(self.state, recent), digests(self.state, best), current, self.limit
        )
        try:
            answer = await self._ask(messages, PURPOSE, f"recommendations at {boundary}")
        except StopRun:
            raise
        except Exception:  # a failed call is booked as such; the version in force stays until the next boundary
            return
        if answer is None:
            return
        archive = self.state.archive
        if any(v.llm_call_id == answer.call_id for v in archive.recommendation_versions()):
            return  # stored before a resume (or earlier in a replay)
        items = parse_recommendations(answer.text, self.limit)
        if items:
            text = render_recommendations(items)
            archive.add_recommendations(current.version + 1, boundary + 1, text, answer.call_id)
