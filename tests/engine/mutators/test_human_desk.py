"""The human mutator's desk: a question shown and left in the run folder, answered from the terminal (ended by
a line '.', by the end of input, or from a file named '@PATH') or from the run folder (the live page's write)."""

from __future__ import annotations

import asyncio
import io
import json

from engine.mutators.answers import extract_description
from engine.mutators.human import HumanMutator, as_whole_file
from engine.mutators.human_desk import (
    Desk,
    Question,
    TerminalLines,
    answer_file,
    expansion_of,
    read_pending,
    write_answer,
)

QUESTION = Question("parent 3 child 0 attempt 0", 3, "mutate", [{"role": "user", "content": "improve [this]"}])


def desk_over(tmp_path, typed: str) -> tuple[Desk, list[str]]:
    shown: list[str] = []
    return Desk(tmp_path, shown.append, TerminalLines(io.StringIO(typed))), shown


def test_a_terminal_answer_ends_at_a_dot_line_and_the_next_lines_wait_for_the_next_question(tmp_path):
    desk, shown = desk_over(tmp_path, "first\nanswer\n.\nsecond\n.\n")
    assert asyncio.run(desk.ask(QUESTION)) == "first\nanswer\n"
    assert "improve [this]" in shown[0] and "parent 3 child 0 attempt 0" in shown[0]
    assert read_pending(tmp_path) is None  # answered: nothing waits
    assert asyncio.run(desk.ask(QUESTION)) == "second\n"


def test_the_end_of_input_ends_an_answer_and_at_path_answers_with_a_file(tmp_path):
    (tmp_path / "answer.py").write_text("def priority(item, bins):\n    return -bins\n")
    desk, _ = desk_over(tmp_path, f"@{tmp_path / 'answer.py'}\n.\nlast words")
    assert asyncio.run(desk.ask(QUESTION)).startswith("def priority(item, bins):")
    assert asyncio.run(desk.ask(QUESTION)) == "last words"


def test_an_empty_terminal_leaves_the_question_to_the_run_folder(tmp_path):
    desk, shown = desk_over(tmp_path, ".\n")  # an empty answer, then the end of input

    async def answer_from_the_page() -> str:
        asking = asyncio.ensure_future(desk.ask(QUESTION))
        while read_pending(tmp_path) is None:
            await asyncio.sleep(0.01)
        pending = json.loads((tmp_path / "human" / "pending.json").read_text())
        assert pending["messages"] == QUESTION.messages and pending["parent"] == 3
        write_answer(tmp_path, pending["key"], "from the page")
        return await asking

    assert asyncio.run(answer_from_the_page()) == "from the page"
    assert not answer_file(tmp_path, QUESTION.key).exists() and read_pending(tmp_path) is None
    assert any("empty answer" in line for line in shown) and any("input has ended" in line for line in shown)


def test_a_question_cut_short_stays_pending_for_a_resume(tmp_path):
    desk, _ = desk_over(tmp_path, "")

    async def cut() -> None:
        asking = asyncio.ensure_future(desk.ask(QUESTION))
        await asyncio.sleep(0.05)
        asking.cancel()
        await asyncio.gather(asking, return_exceptions=True)

    asyncio.run(cut())
    assert read_pending(tmp_path)["key"] == QUESTION.key
    assert expansion_of(QUESTION.key) == "parent 3 child 0"


def test_a_person_may_answer_blocks_a_fenced_file_or_a_bare_program(tmp_path):
    parent = {"agent.py": "import numpy as np\n\ndef priority(item, bins):\n    return np.zeros_like(bins)\n"}
    mutator = HumanMutator.__new__(HumanMutator)  # only the answer's reading is exercised here
    mutator.answer_format, mutator._malformed, mutator._rewriting = "diff", {}, set()
    blocks = "agent.py\n<<<<<<< SEARCH\n    return np.zeros_like(bins)\n=======\n    return -bins\n>>>>>>> REPLACE\n"
    bare = "def priority(item, bins):\n    return -bins * 2\n"
    fenced = f"agent.py\n```python\n{bare}```\n"
    for text, expected, said in (
        (blocks, "    return -bins\n", ""),
        (bare, bare, "A whole agent.py, written by hand."),
        ("Change: doubled.\n" + bare, bare, "doubled."),
        (fenced, bare, ""),
    ):
        read = as_whole_file(text, "agent.py")
        files, why, _ = mutator._edited(read, "human", "diff", "agent.py", dict(parent), parent, None)
        assert why == "" and files["agent.py"].endswith(expected), (text, why)
        assert extract_description(read) == said, text
    assert as_whole_file(blocks, "agent.py") == blocks and as_whole_file(fenced, "agent.py") == fenced
