"""`--evolve-prompts`: the mutation prompt's instruction part as a small population that a model extends.

ShinkaEvolve (core/prompt_evolver.py, database/prompt_dbase.py) keeps an archive of system prompts,
samples one per proposal by UCB, avg_improvement + c * sqrt(log N / n) with c = 1, mixed with
epsilon-greedy (a uniform draw with probability 0.1), and has a model rewrite a sampled prompt
(a diff or a full rewrite, the new text between <PROMPT> tags, refused under 50 characters).

Clade follows its UCB, without the epsilon-greedy draw: the choice is a function of the archive alone, so a
resumed run and a replay choose as the original did, with no random state to restore. A prompt's fitness
is the model bandit's credit (engine/mutators/model_choice.py): each child it made counts once, with
max(0, child's dev mean - parent's dev mean) once both are measured (0 before, and for an invalid or
failed child), read from the archive at every choice. A prompt with no child yet is chosen first (lowest
id first). Every M expansions (`--prompt-evolve-interval`) one call (purpose `prompt`) shows the model
the best prompts with their records and asks for a new one, a full rewrite whose parent is the best; its
answer's <PROMPT> part (else the whole answer, when it has no tag at all) of 50 to 4,000 characters joins
the population (table `prompts`), otherwise nothing does until the next interval. Prompt 0 is the
built-in instruction. The answer format and the rest of the prompt stay fixed: only the instruction
evolves, so a bad prompt cannot break the edits' format. How a call is due, resumed and replayed:
engine/mutators/periodic.py.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Sequence

from archive.reads_prompts import PromptRecord, PromptStanding
from engine.errors import StopRun
from engine.mutators.periodic import Ask, Boundaries, children_stored
from engine.mutators.prompt import MUTATION_INSTRUCTION

EXPLORATION = 1.0  # ShinkaEvolve's c
SHOWN = 3  # the best prompts the writer is shown
MIN_CHARS, MAX_CHARS = 50, 4_000
PURPOSE = "prompt"

_TAGGED = re.compile(r"<PROMPT>\s*(.*?)\s*</PROMPT>", re.S | re.I)


def fitness(standing: PromptStanding) -> float:
    """Mean improvement per child made (0 for a prompt without children)."""
    return standing.improvement / standing.children if standing.children else 0.0


def ucb_choice(standings: Sequence[PromptStanding], exploration: float = EXPLORATION) -> int:
    """The prompt id UCB picks: the first without a child, else the highest fitness + c * sqrt(log N / n)."""
    if not standings:
        raise ValueError("no prompt to choose from")
    for s in standings:
        if s.children == 0:
            return s.prompt.id
    total = sum(s.children for s in standings)
    scores = [fitness(s) + exploration * math.sqrt(math.log(total) / s.children) for s in standings]
    return standings[max(range(len(standings)), key=lambda i: (scores[i], -i))].prompt.id


def parse_prompt(text: str) -> str | None:
    """The new prompt in an answer: between <PROMPT> and </PROMPT>, else the whole answer when it has no tag
    at all; None when a tag is left open (a small model echoing the question), or the text is shorter than
    MIN_CHARS or longer than MAX_CHARS, or still holds a tag."""
    match = _TAGGED.search(text)
    if match is None and "<prompt>" in text.lower():
        return None
    body = (match.group(1) if match else text).strip()
    if "<prompt>" in body.lower() or "</prompt>" in body.lower():
        return None
    return body if MIN_CHARS <= len(body) <= MAX_CHARS else None


def build_prompt_evolution_prompt(task_description: str, best: Sequence[PromptStanding]) -> list[dict]:
    """[system, user] messages asking for a new instruction written from the best ones."""
    system = (
        "You improve the instructions given to a programmer model. That model is shown a program (an agent "
        "scored on a task's instances), its results and its lineage, and edits it; the instruction below opens "
        "its system message, and a fixed answer format follows it. Several instructions are in use; each is "
        "scored by how much the children written under it improved on their parents."
    )
    shown = []
    for s in best:
        shown.append(
            f"## Prompt {s.prompt.id}: {s.children} children, mean improvement {fitness(s):.4f}\n"
            f"<PROMPT>\n{s.prompt.text}\n</PROMPT>"
        )
    user = (
        f"# Task the programs solve\n{task_description.strip()[:3000]}\n\n"
        "# The best instructions so far, best first\n" + "\n\n".join(shown) + "\n\n"
        "# Your answer\nWrite one new instruction, a full rewrite of the best that keeps what works and changes "
        "what should lead to larger improvements (strategy, what to look at, how bold to be). Say nothing of the "
        f"answer format. Between <PROMPT> and </PROMPT>, {MIN_CHARS} to {MAX_CHARS} characters."
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


class PromptPopulation:
    """The instruction of each expansion, chosen by UCB; a new one written every `every` children."""

    def __init__(self, state, ask: Ask, *, every: int) -> None:
        self.state = state
        self._ask = ask
        self._boundaries = Boundaries(every)
        self._lock = asyncio.Lock()
        if not state.archive.prompt_records():
            state.archive.add_prompt(0, None, MUTATION_INSTRUCTION, int(state.tree.n), None)

    async def for_expansion(self, pinned: int | None = None) -> PromptRecord:
        """The prompt this expansion uses: a replayed expansion's recorded one (`pinned`), else UCB's choice,
        after writing a new prompt when a boundary is due."""
        async with self._lock:
            await self._write_if_due()
        records = {p.id: p for p in self.state.archive.prompt_records()}
        if pinned is not None and pinned in records:
            return records[pinned]
        return records[ucb_choice(self.state.archive.prompt_standings())]

    async def _write_if_due(self) -> None:
        boundary = self._boundaries.due(children_stored(self.state))
        if boundary is None:
            return
        archive = self.state.archive
        standings = sorted(archive.prompt_standings(), key=lambda s: (-fitness(s), s.prompt.id))
        messages = build_prompt_evolution_prompt(self.state.task.description, standings[:SHOWN])
        try:
            answer = await self._ask(messages, PURPOSE, f"prompt at {boundary}")
        except StopRun:
            raise
        except Exception:  # a failed call is booked as such; the population stays until the next boundary
            return
        if answer is None:
            return
        records = archive.prompt_records()
        if any(p.llm_call_id == answer.call_id for p in records):
            return  # stored before a resume (or earlier in a replay)
        text = parse_prompt(answer.text)
        if text is not None:
            parent = standings[0].prompt.id
            archive.add_prompt(max(p.id for p in records) + 1, parent, text, boundary + 1, answer.call_id)
