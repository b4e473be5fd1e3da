"""What the LLM mutator's periodic calls share: when one is due, and how its answer is asked without paying twice.

`--meta-recommendations N` and `--evolve-prompts` (engine/mutators/scratchpad.py,
engine/mutators/prompt_population.py) each make one model call every so many
expansions. A call is due at each boundary of children stored, c // every * every
(boundary 0 never), tried once per boundary in a session. Its key names the boundary
(`recommendations at 8`), and what it writes is stored as written at that boundary's node count (its
children and the root: 9), whenever the call returned, so that:

- a resumed run after kill -9 finds a paid answer by its key in its own archive
  (`Archive.first_llm_answer_for_key`, the rule of the improvement notes' `diagnose`
  calls) and stores it if the crash came before; an answer whose llm_calls id is
  already stored is not stored twice;
- a replay asks the same key and is answered from the original's archive (by request
  hash, else by key), at no cost; a boundary where the original got no answer is
  skipped, as the original had to go on without one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Answered:
    """A periodic call's answer and the llm_calls row that holds it (in a replay, the original's row)."""

    text: str
    call_id: int


# (messages, purpose, key) -> the answer, or None when a replay's original has none under the key
Ask = Callable[[list[dict], str, str], Awaitable[Answered | None]]


@dataclass
class Boundaries:
    """Every `every` children stored: the boundary due now, once per session."""

    every: int
    tried: set[int] = field(default_factory=set)

    def due(self, children: int) -> int | None:
        """The boundary reached by `children` stored children when not yet tried in this session, else None."""
        boundary = children // self.every * self.every
        if boundary <= 0 or boundary in self.tried:
            return None
        self.tried.add(boundary)
        return boundary


def children_stored(state) -> int:
    """Children stored so far: the tree's nodes less its root."""
    return max(0, int(state.tree.n) - 1)
