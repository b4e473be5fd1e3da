"""Reading LLM answers (engine.mutators.answers) and applying them (engine.mutators.edits)."""

from __future__ import annotations

import pytest

from engine.mutators.answers import (
    AnswerFormatError,
    extract_description,
    parse_answer,
    parse_diagnosis,
)
from engine.mutators.base import MutationError
from engine.mutators.edits import EditBlock, apply_blocks, apply_rewrite, find_editable
from engine.mutators.prompt import build_retry_message

AGENT = (
    "import numpy as np\n"
    "\n"
    "\n"
    "def _fit(item, bins):\n"
    "    slack = bins - item\n"
    "    return -slack\n"
    "\n"
    "\n"
    "def priority(item, bins):\n"
    "    scores = _fit(item, bins)\n"
    "    if item > 50:\n"
    "        scores = scores * 2.0\n"
    "    return scores\n"
)
MARKED = (
    "import numpy as np\n"  # 1
    "\n"  # 2
    "\n"  # 3
    "def priority(item, bins):\n"  # 4
    "    # EVOLVE-BLOCK-START\n"  # 5
    "    scores = -(bins - item)\n"  # 6
    "    scores = scores * 1.0\n"  # 7
    "    # EVOLVE-BLOCK-END\n"  # 8
    "    return scores\n"  # 9
)


def block(search: str, replace: str, path: str = "agent.py") -> str:
    return f"{path}\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"


# --- parsing -----------------------------------------------------------------------------------------


def test_parse_one_block() -> None:
    answer = "Change: double the slack term\n" + block("    return -slack\n", "    return -2 * slack\n")
    assert parse_answer(answer, "diff", "agent.py") == [
        EditBlock("agent.py", "    return -slack\n", "    return -2 * slack\n")
    ]
    assert extract_description(answer) == "double the slack term"


def test_parse_several_fenced_blocks_with_file_lines() -> None:
    answer = (
        "I will change two files.\n\n"
        "lib/util.py\n```python\n<<<<<<< SEARCH\nA = 1\n=======\nA = 2\n>>>>>>> REPLACE\n```\n\n"
        "```python\n<<<<<<< SEARCH\nB = 1\n=======\nB = 3\n>>>>>>> REPLACE\n```\n\n"  # directly follows: same file
        "Now the agent:\n\n"
        "```python\n<<<<<<< SEARCH\n    return scores\n=======\n\n>>>>>>> REPLACE\n```\n"  # prose between: entry
        "```python helper.py\n<<<<<<< SEARCH\n=======\nX = 1\n>>>>>>> REPLACE\n```\n"  # name in the info string
    )
    blocks = parse_answer(answer, "diff", "agent.py")
    assert [b.path for b in blocks] == ["lib/util.py", "lib/util.py", "agent.py", "helper.py"]
    assert blocks[1] == EditBlock("lib/util.py", "B = 1\n", "B = 3\n")
    assert blocks[2].replace == "\n" and blocks[3].search == ""
    assert extract_description(answer) == "I will change two files."


@pytest.mark.parametrize(
    "answer, words",
    [
        ("", "empty"),
        ("   \n", "empty"),
        ("I think the code is fine as it is.", "no SEARCH/REPLACE"),
        ("```python\ndef priority(item, bins):\n    return bins\n```", "no SEARCH/REPLACE"),
        ("<<<<<<< SEARCH\nx = 1\n>>>>>>> REPLACE\n", "before any '======='"),
        ("<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n", "no '>>>>>>> REPLACE'"),
        ("<<<<<<< SEARCH\nx = 1\n", "no '======='"),
        ("x = 1\n=======\nx = 2\n>>>>>>> REPLACE\n", "without a '<<<<<<< SEARCH'"),
        ("<<<<<<< SEARCH\na\n=======\nb\n<<<<<<< SEARCH\nc\n=======\nd\n>>>>>>> REPLACE\n", "REPLACE' is missing"),
        ("../etc/passwd.py\n<<<<<<< SEARCH\n=======\nx\n>>>>>>> REPLACE\n", "unsafe file path"),
    ],
)
def test_malformed_answers_raise_one_line(answer: str, words: str) -> None:
    with pytest.raises(AnswerFormatError) as info:
        parse_answer(answer, "diff", "agent.py")
    assert words in str(info.value) and "\n" not in str(info.value)
    assert isinstance(info.value, MutationError)


def test_parse_rewrite() -> None:
    answer = "Change: best fit\n\nagent.py\n```python\ndef priority(item, bins):\n    return -(bins - item)\n```\n"
    assert parse_answer(answer, "rewrite", "agent.py") == {
        "agent.py": "def priority(item, bins):\n    return -(bins - item)\n"
    }
    unnamed = "Here:\n```python\nX = 1\n```\n```bash\npython run.py\n```\n"
    assert parse_answer(unnamed, "rewrite", "agent.py") == {"agent.py": "X = 1\n"}
    for bad, words in [
        ("just prose", "no fenced code block"),
        ("```python\nX = 1\n", "not closed"),
        ("```python\nA = 1\n```\n```python\nB = 2\n```\n", "without a file name"),
        ("agent.py\n```python\n\n```\n", "empty"),
        (block("a\n", "b\n"), "SEARCH/REPLACE blocks"),
    ]:
        with pytest.raises(AnswerFormatError, match=words):
            parse_answer(bad, "rewrite", "agent.py")


# --- applying ----------------------------------------------------------------------------------------


def test_apply_exact_blocks_in_order() -> None:
    blocks = parse_answer(
        block("    slack = bins - item\n", "    slack = bins - item + 1\n")
        + block("    slack = bins - item + 1\n    return -slack\n", "    return -slack * slack\n"),
        "diff",
        "agent.py",
    )
    result = apply_blocks({"agent.py": AGENT, "other.py": "Y = 1\n"}, blocks)
    assert result.ok and result.applied == 2
    assert result.files["agent.py"] == AGENT.replace(
        "    slack = bins - item\n    return -slack\n", "    return -slack * slack\n"
    )
    assert result.files["other.py"] == "Y = 1\n"


def test_apply_whitespace_tolerant_match() -> None:
    # trailing spaces in the SEARCH text, and the whole block indented 4 spaces less than the file
    search = "if item > 50:   \n    scores = scores * 2.0\n"
    replace = "if item > 40:\n    scores = scores * 3.0\n"
    result = apply_blocks({"agent.py": AGENT}, [EditBlock("agent.py", search, replace)])
    assert result.ok
    assert "    if item > 40:\n        scores = scores * 3.0\n    return scores\n" in result.files["agent.py"]
    # indented more than the file: the replacement is shifted back
    result = apply_blocks(
        {"agent.py": AGENT}, [EditBlock("agent.py", "        return -slack\n", "        return slack\n")]
    )
    assert result.ok and "\n    return slack\n" in result.files["agent.py"]


def test_non_matching_block_fails_with_the_closest_lines() -> None:
    search = "    if item >= 50:\n        scores = scores * 2.5\n"  # close to lines 11-12, not equal
    blocks = [
        EditBlock("agent.py", search, "    pass\n"),
        EditBlock("agent.py", "    return scores\n", "    return scores + 1\n"),
    ]
    result = apply_blocks({"agent.py": AGENT}, blocks)
    assert result.applied == 1 and "return scores + 1" in result.files["agent.py"]  # the good block applied
    [failure] = result.failures  # the bad one is reported
    assert failure.index == 1 and "not found" in failure.reason
    assert failure.closest_line == 11
    assert failure.closest == "    if item > 50:\n        scores = scores * 2.0"
    message = build_retry_message(result.failures)["content"]
    assert "lines 11-12" in message and "scores * 2.5" in message and "scores * 2.0" in message


def test_closest_lines_in_a_long_file() -> None:
    body = "".join(f"def f{n}(x):\n    return x * {n} + {n * 7}\n\n" for n in range(600))
    search = "def f417(x):\n    return x * 417 + 2920\n"  # f417 really returns x * 417 + 2919
    result = apply_blocks({"agent.py": body}, [EditBlock("agent.py", search, "")])
    [failure] = result.failures
    assert failure.closest == "def f417(x):\n    return x * 417 + 2919" and failure.closest_line == 417 * 3 + 1


def test_evolve_block_region_is_enforced() -> None:
    region = find_editable({"agent.py": MARKED}, "agent.py")
    assert (region.first_line, region.last_line) == (6, 7)
    files = {"agent.py": MARKED, "util.py": "U = 1\n"}
    inside = EditBlock("agent.py", "    scores = scores * 1.0\n", "    scores = scores * 1.5\n    scores += 1\n")
    with_context = EditBlock(
        "agent.py",
        "    # EVOLVE-BLOCK-START\n    scores = -(bins - item)\n",
        "    # EVOLVE-BLOCK-START\n    scores = -abs(bins - item)\n",
    )
    outside = EditBlock("agent.py", "    return scores\n", "    return -scores\n")
    marker = EditBlock("agent.py", "    # EVOLVE-BLOCK-END\n", "")
    other = EditBlock("util.py", "U = 1\n", "U = 2\n")
    new_file = EditBlock("new.py", "", "N = 1\n")
    result = apply_blocks(files, [inside, with_context, outside, marker, other, new_file], region)
    assert result.applied == 2
    assert result.files["agent.py"] == MARKED.replace("scores * 1.0\n", "scores * 1.5\n    scores += 1\n").replace(
        "-(bins - item)", "-abs(bins - item)"
    )
    assert [f.index for f in result.failures] == [3, 4, 5, 6]
    assert "outside lines 6-8 of agent.py" in result.failures[0].reason  # the region grew by the first block
    assert result.failures[0].closest == "    return scores"
    assert "marker" in result.failures[1].reason
    assert "not util.py" in result.failures[2].reason and "not new.py" in result.failures[3].reason
    assert "new.py" not in result.files and result.files["util.py"] == "U = 1\n"
    with pytest.raises(MutationError, match="no EVOLVE-BLOCK-END"):
        find_editable({"agent.py": "# EVOLVE-BLOCK-START\nx = 1\n"}, "agent.py")
    assert find_editable({"agent.py": AGENT}, "agent.py") is None


def test_block_creating_a_new_file_and_missing_file() -> None:
    result = apply_blocks(
        {"agent.py": AGENT},
        [
            EditBlock("lib/helpers.py", "", "def helper():\n    return 1\n"),
            EditBlock("nothere.py", "x = 1\n", "x = 2\n"),
            EditBlock("agent.py", "", "x = 1\n"),
        ],
    )
    assert result.files["lib/helpers.py"] == "def helper():\n    return 1\n"
    assert "does not exist" in result.failures[0].reason and "empty SEARCH" in result.failures[1].reason
    assert result.files["agent.py"] == AGENT


def test_rewrite_format_applies_and_respects_the_region() -> None:
    new = "def priority(item, bins):\n    return bins"
    assert apply_rewrite({"agent.py": AGENT}, {"agent.py": new}).files == {"agent.py": new + "\n"}
    region = find_editable({"agent.py": MARKED}, "agent.py")
    rewritten = MARKED.replace("    scores = scores * 1.0\n", "    scores = scores ** 2\n    scores -= 1\n")
    # trailing spaces outside the region are tolerated; the parent's outside text is kept byte for byte
    result = apply_rewrite(
        {"agent.py": MARKED}, {"agent.py": rewritten.replace("import numpy as np\n", "import numpy as np   \n")}, region
    )
    assert result.ok and result.files["agent.py"] == rewritten
    result = apply_rewrite({"agent.py": MARKED}, {"agent.py": rewritten.replace("return scores", "return 0")}, region)
    [failure] = result.failures
    assert "line 9" in failure.reason and "outside" in failure.reason and result.files["agent.py"] == MARKED
    dropped = "def priority(item, bins):\n    return 0\n"
    assert "dropped" in apply_rewrite({"agent.py": MARKED}, {"agent.py": dropped}, region).failures[0].reason


# --- diagnosis ---------------------------------------------------------------------------------------


def test_parse_diagnosis() -> None:
    fenced = (
        'Here is my analysis.\n```json\n{"summary": "ties go to the first bin", '
        '"proposed_improvement": "best fit", "implementation_plan": ["compute slack", "return -slack"]}\n```'
    )
    assert parse_diagnosis(fenced) == {
        "summary": "ties go to the first bin",
        "proposed_improvement": "best fit",
        "implementation_plan": "1. compute slack\n2. return -slack",
    }
    bare = (
        'Sure! {"note": {"x": 1}} then {"summary": "s", "proposed_improvement": "p", '
        '"implementation_plan": "plan"} done'
    )
    assert parse_diagnosis(bare) == {"summary": "s", "proposed_improvement": "p", "implementation_plan": "plan"}
    with pytest.raises(AnswerFormatError, match="lacks implementation_plan"):
        parse_diagnosis('{"summary": "s", "proposed_improvement": "p"}')
    with pytest.raises(AnswerFormatError, match="no JSON object"):
        parse_diagnosis("I could not decide.")
    with pytest.raises(AnswerFormatError, match="empty"):
        parse_diagnosis("")
