"""The human mutator: a person answers the LLM mutator's prompts (`--mutator human`).

OpenEvolve's manual mode (scripts/manual.py) puts a person in place of the model; so does this mutator.
It is the LLM mutator (engine/mutators/llm.py) with one change, where the answer comes from: the same
prompt, the same parsing of SEARCH/REPLACE blocks or whole files, the same answers sent back when edits do
not apply, the same keys. The person answers at the terminal or on the live page (engine/mutators/
human_desk.py); each answer is booked by the run's LLM client as a call of model `human`, 0 tokens, cost
0 (`LLMClient.book_given`), so a replay answers from `llm_calls` without asking anyone and the report
and `runs show` count it like any other call.

One question at a time: the run's expansions wait on one person (the session gives the scheduler one
expansion slot whatever --llm-concurrency says), while evaluations in flight go on.

A run interrupted while a question waits leaves `human/pending.json`: a resumed run asks that expansion
(same parent, same key) again before anything else, as it finishes an expansion whose model answer was
paid before a crash.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

from engine.mutators.human_desk import Desk, Question, expansion_of, human_dir, read_pending
from engine.mutators.llm import AskSettings, LLMMutator
from engine.mutators.model_choice import FixedWeights

HUMAN = "human"  # the model named on the children and the llm_calls rows
SEARCH_MARK = re.compile(r"^\s*<{5,}\s*SEARCH", re.M)
FENCE = re.compile(r"^\s*(```|~~~)", re.M)
CHANGE_LINE = re.compile(r"\W*change\W*:", re.I)  # a first line "Change: ..." says what the answer changes


@dataclass(frozen=True)
class _Read:
    """An answer as the conversation reads it."""

    text: str


def as_whole_file(text: str, entry_file: str) -> str:
    """`text` as the LLM mutator reads it: as it is when it has SEARCH/REPLACE blocks or a fenced block; a
    bare program (no fence) is the whole entry file, described as written by hand unless it says `Change:`."""
    if SEARCH_MARK.search(text) or FENCE.search(text):
        return text
    lines = text.strip("\n").splitlines()
    said = f"A whole {entry_file}, written by hand."
    if lines and CHANGE_LINE.match(lines[0]):
        said, lines = lines[0], lines[1:]
    body = "\n".join(lines).strip("\n")
    return f"{said}\n\n{entry_file}\n````\n{body}\n````\n"


class HumanMutator(LLMMutator):
    name = HUMAN

    def __init__(self, client, state, desk: Desk | None, *, answer_format: str, diagnose: bool, say=None) -> None:
        """`desk`: where the person is asked; None for a replay, whose client answers from the recorded calls."""
        # a person needs no switch of format
        asking = AskSettings(answer_format="diff" if answer_format == "auto" else answer_format, diagnose=diagnose)
        super().__init__(client, FixedWeights([(HUMAN, 1.0)]), state, asking=asking, say=say)
        self.desk = desk

    async def _ask(self, messages: list[dict], *, model: str, purpose: str, parent: int | None, key: str):
        """The person's answer (booked as a call of model `human`), or the one recorded under this key (a
        resumed run, a replay); a bare program as the whole entry file (`as_whole_file`), either way."""
        recorded = self.state.archive.first_llm_answer_for_key(key)
        if recorded is not None or self.desk is None:  # answered before a crash; or a replay's recorded answer
            answer = await super()._ask(messages, model=model, purpose=purpose, parent=parent, key=key)
            return _Read(as_whole_file(answer.text, self.state.task.entry_file))
        started = time.perf_counter()
        text = await self.desk.ask(Question(key, parent, purpose, messages))
        self.client.book_given(
            messages,
            text,
            model=HUMAN,
            purpose=purpose,
            node_id=parent,
            key=key,
            latency_s=time.perf_counter() - started,
        )
        return _Read(as_whole_file(text, self.state.task.entry_file))

    def _edited(self, text, model, answer_format, entry_file, current, parent_files, editable):
        """A person may answer in either format, whatever the prompt asked: SEARCH/REPLACE blocks when the
        answer has any, else whole files."""
        answer_format = "diff" if SEARCH_MARK.search(text) else "rewrite"
        return super()._edited(text, model, answer_format, entry_file, current, parent_files, editable)

    def orphans(self) -> list[tuple[int, str]]:
        """The LLM mutator's (answered, never stored), then the expansion a question was waiting on when the
        run stopped (its pending file), unless its child is stored."""
        found = super().orphans()
        if self.desk is None:
            return found
        pending = read_pending(self.desk.run_folder)
        if pending is None:
            return found
        key = expansion_of(pending["key"])
        if key in {k for _, k in found} or self._child_stored(key):
            return found
        return [*found, (int(pending["parent"]), key)]

    def _child_stored(self, key: str) -> bool:
        return any(detail.get("key") == key for *_, detail in self.state.archive.events("expand"))


def human_desk(run_folder: Path, say) -> Desk:
    """The desk of a run in `run_folder`: questions shown through `say` (plain text), answers from stdin."""
    import sys

    from engine.mutators.human_desk import TerminalLines

    human_dir(run_folder).mkdir(parents=True, exist_ok=True)
    return Desk(run_folder, say, TerminalLines(sys.stdin))
