"""The pieces of --meta-recommendations and --evolve-prompts: parsing answers, the boundaries, the UCB choice,
the prompt sections, and the archive's rows and reads."""

from __future__ import annotations

from dataclasses import replace

import pytest

from archive import Archive, EvaluationRecord, NodeRecord
from archive.reads_prompts import PromptRecord, PromptStanding
from engine.mutators.periodic import Boundaries
from engine.mutators.prompt import MUTATION_INSTRUCTION, PromptContext, build_mutation_prompt
from engine.mutators.prompt_population import fitness, parse_prompt, ucb_choice
from engine.mutators.scratchpad import diff_stat, parse_recommendations


def test_a_numbered_list_gives_its_first_k_items_with_their_continuations():
    answer = "Some thoughts first.\n1. Try best fit.\n   It packs tighter.\n2) Drop the noise term.\n\n3. Third.\n"
    assert parse_recommendations(answer, 2) == ["Try best fit. It packs tighter.", "Drop the noise term."]
    assert parse_recommendations("**1.** Bold numbers\n**2.** too", 5) == ["Bold numbers", "too"]


def test_without_numbers_bullets_then_lines_are_the_items():
    assert parse_recommendations("Ideas:\n- one\n* two\n", 5) == ["one", "two"]
    assert parse_recommendations("# Heading\nTry this.\n\nAnd that.", 5) == ["Try this.", "And that."]
    assert parse_recommendations("", 5) == []
    assert len(parse_recommendations("1. " + "x" * 5000, 1)[0]) == 600  # clipped


def test_a_boundary_is_due_once_per_session_and_never_at_zero():
    every = Boundaries(4)
    assert [every.due(c) for c in (0, 3, 4, 4, 5, 9, 12)] == [None, None, 4, None, None, 8, 12]
    assert Boundaries(4).due(6) == 4  # a resumed session tries its current boundary again (answers by key)


def _standing(prompt: int, children: int, improvement: float) -> PromptStanding:
    return PromptStanding(PromptRecord(prompt, None, f"prompt {prompt}", 1, None), children, children, improvement)


def test_ucb_tries_a_prompt_without_children_first_then_the_better_one_more():
    assert ucb_choice([_standing(0, 3, 0.3), _standing(1, 0, 0.0), _standing(2, 0, 0.0)]) == 1
    good, bad = _standing(0, 5, 1.0), _standing(1, 5, 0.0)
    assert ucb_choice([good, bad]) == 0 and ucb_choice([bad, good]) == 0
    # exploration: a prompt tried far less catches up despite a lower mean
    assert ucb_choice([_standing(0, 50, 5.0), _standing(1, 1, 0.0)]) == 1
    assert fitness(_standing(0, 4, 0.2)) == pytest.approx(0.05) and fitness(_standing(0, 0, 0.0)) == 0.0
    with pytest.raises(ValueError):
        ucb_choice([])


def test_ucb_gives_more_expansions_to_the_prompt_whose_children_improve():
    counts = {0: [0, 0.0], 1: [0, 0.0]}  # prompt -> [children, summed improvement]
    for _ in range(40):
        chosen = ucb_choice([_standing(p, n, s) for p, (n, s) in counts.items()])
        counts[chosen][0] += 1
        counts[chosen][1] += 0.3 if chosen == 1 else 0.0
    assert counts[1][0] > counts[0][0] + 10


def test_a_new_prompt_is_read_from_its_tags_and_refused_when_too_short_or_long():
    long_enough = "Change one thing at a time, and say why it should raise the score on unseen instances."
    assert parse_prompt(f"Here:\n<PROMPT>\n{long_enough}\n</PROMPT>\nThanks") == long_enough
    assert parse_prompt(long_enough) == long_enough  # untagged: the whole answer
    assert parse_prompt("<PROMPT>too short</PROMPT>") is None
    assert parse_prompt("x" * 5000) is None
    echoed = "# Task the programs solve\nOnline bin packing, and more text than fifty characters.\n<PROMPT>\n<PROMPT>"
    assert parse_prompt(echoed) is None  # a tag left open: a small model echoing the question


def test_the_prompt_carries_the_instruction_and_the_recommendations():
    ctx = PromptContext(
        "Pack items.",
        "agent.py",
        "priority",
        ("item", "bins"),
        {"agent.py": "def priority(item, bins):\n    return bins\n"},
    )
    plain = build_mutation_prompt(ctx)
    assert plain[0]["content"].startswith(MUTATION_INSTRUCTION) and "Recommendations" not in plain[1]["content"]
    told = build_mutation_prompt(
        replace(
            ctx, instruction="Be bold.", recommendations=("Try best fit.", "Drop noise."), recommendations_version=3
        )
    )
    assert told[0]["content"].startswith("Be bold.\n\n") and MUTATION_INSTRUCTION not in told[0]["content"]
    assert "(version 3)\n1. Try best fit.\n2. Drop noise.\n\n# Your answer" in told[1]["content"]


def test_a_diff_stat_counts_lines_not_headers():
    diff = "--- a/agent.py\n+++ b/agent.py\n@@ -1 +1,2 @@\n-a\n+b\n+c\n"
    assert diff_stat(diff) == "+2 -1 lines"


def test_the_archive_keeps_versions_prompts_and_each_childs_links(tmp_path):
    archive = Archive.create(tmp_path / "a.duckdb", "r", {}, 0)
    try:
        archive.add_node(NodeRecord.root(0, "h0", "seed"), {"agent.py": "x = 0\n"})
        archive.add_prompt(0, None, "built in", 1, None)
        archive.add_prompt(1, 0, "written", 3, 7)
        archive.add_recommendations(1, 3, "1. one\n2. two", 6)
        for node, prompt in ((1, 0), (2, 1), (3, 1)):
            record = NodeRecord(node, 0, 1, "valid", "llm", recommendations_version=1, prompt_id=prompt)
            archive.add_node(record, {"agent.py": f"x = {node}\n"})
        for node, score in ((0, 0.5), (1, 0.4), (2, 0.9), (3, 0.7)):
            archive.add_evaluation(EvaluationRecord(node, "i0", "dev", 0, score))
        (version,) = archive.recommendation_versions()
        assert (version.version, version.written_at_nodes, version.text, version.llm_call_id) == (
            1,
            3,
            "1. one\n2. two",
            6,
        )
        standings = {s.prompt.id: s for s in archive.prompt_standings()}
        assert (standings[0].children, standings[0].improvement) == (1, 0.0)  # worse than its parent: 0, not < 0
        assert standings[1].children == 2 and standings[1].improvement == pytest.approx(0.4 + 0.2)
        assert archive.node_prompt_links() == {1: (1, 0), 2: (1, 1), 3: (1, 1)}
        assert [kind for _, kind, _, _ in archive.events() if kind in ("prompt", "recommendations")] == [
            "prompt",
            "prompt",
            "recommendations",
        ]
    finally:
        archive.close()
