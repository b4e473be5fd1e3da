"""The LLM mutator's prompts (engine.mutators.prompt): what they contain, and that every part is bounded."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.mutators.edits import BlockFailure
from engine.mutators.prompt import (
    Inspiration,
    InstanceFeedback,
    LineageStep,
    PromptContext,
    build_diagnosis_prompt,
    build_mutation_prompt,
    build_retry_message,
    render_feedback,
)
from tasks.binpack.task import DESCRIPTION

ROOT = Path(__file__).resolve().parents[3]
SEED = (ROOT / "agents_seed/binpack/agent.py").read_text()
MARKED = (
    "import numpy as np\n\n\n"
    "def priority(item, bins):\n"
    "    # EVOLVE-BLOCK-START\n"
    "    score = -bins\n"
    "    # EVOLVE-BLOCK-END\n"
    "    return score\n"
)


def context(**over) -> PromptContext:
    base = dict(
        task_description=DESCRIPTION,
        entry_file="agent.py",
        entry_function="priority",
        entry_args=("item", "bins"),
        parent_files={"agent.py": SEED, "helpers.py": "HELPER_MARK = 1\n"},
        feedback=[
            InstanceFeedback(
                "weibull_3",
                "error",
                None,
                "answer.json is not JSON",
                "Traceback ...\nZeroDivisionError: float division by zero",
            ),
            InstanceFeedback("uniform_7", "ok", 0.27, "41 bins, L1 39, excess 5.13%"),
        ],
        lineage=[
            LineageStep(0, "seed", 0.5, 16),
            LineageStep(4, "const 0.0->-1.3 in priority", 0.42, 16),
            LineageStep(9, "swap + for - in the fit term", 0.61, 16),
        ],
        inspirations=[Inspiration(12, 0.73, {"agent.py": "def priority(item, bins):\n    return INSPIRED_CODE\n"})],
    )
    base.update(over)
    return PromptContext(**base)


def text_of(messages: list[dict]) -> str:
    assert [m["role"] for m in messages] == ["system", "user"]
    return "\n".join(m["content"] for m in messages)


def test_mutation_prompt_has_every_part() -> None:
    text = text_of(build_mutation_prompt(context()))
    assert DESCRIPTION.strip() in text
    assert SEED.rstrip() in text and "HELPER_MARK = 1" in text  # every parent file, verbatim
    assert "priority(item, bins)" in text and "first positional parameters" in text
    for needle in ("weibull_3", "answer.json is not JSON", "ZeroDivisionError", "uniform_7", "score 0.270"):
        assert needle in text
    # lineage root to parent, with scores and their moves
    assert text.index("node 0 (root): seed") < text.index("const 0.0->-1.3") < text.index("node 9 (parent)")
    assert "0.420 over 16" in text and "(-0.080)" in text and "(+0.190)" in text
    assert "node 12" in text and "INSPIRED_CODE" in text and "0.730" in text
    # the diff format, precisely
    for needle in ("<<<<<<< SEARCH", "=======", ">>>>>>> REPLACE", "exactly", "Change:"):
        assert needle in text
    assert "EVOLVE-BLOCK" not in text  # no markers in the seed: no region rule


def test_only_the_feedback_given_is_printed() -> None:
    # PromptContext has no holdout field at all; the prompt shows the items given and no other instance
    text = text_of(build_mutation_prompt(context(feedback=[InstanceFeedback("dev_only_1", "timeout", None)])))
    assert "dev_only_1" in text and "timeout" in text
    assert "weibull_3" not in text and "holdout" not in text.lower()
    empty = text_of(build_mutation_prompt(context(feedback=[])))
    assert "No failed or weak development instances" in empty
    with pytest.raises(TypeError):
        context(holdout=[InstanceFeedback("h", "ok", 1.0)])


def test_feedback_is_bounded_in_items_and_characters() -> None:
    huge = "".join(f"line {n} of a long traceback\n" for n in range(100_000)) + "FINAL_ERROR_LINE: boom"
    items = [InstanceFeedback(f"inst_{k}", "error", None, "x" * 10_000, huge) for k in range(20)]
    rendered = render_feedback(items, max_items=4, max_chars=3_000)
    assert len(rendered) <= 3_000
    assert "inst_3" in rendered and "inst_4" not in rendered
    assert "16 more instance(s) not shown" in rendered
    assert "FINAL_ERROR_LINE: boom" in rendered  # a stderr tail keeps its end
    assert "characters cut" in rendered  # with a marker
    text = text_of(build_mutation_prompt(context(feedback=items, max_feedback_items=4, max_feedback_chars=3_000)))
    assert len(text) < 20_000 and "line 99999 of a long traceback" in text and "line 5 of a" not in text


def test_evolve_block_rule_and_rewrite_format() -> None:
    ctx = context(parent_files={"agent.py": MARKED}, answer_format="rewrite")
    text = text_of(build_mutation_prompt(ctx))
    assert "Only the code between them (lines 6-6) may change" in text
    assert "EVOLVE-BLOCK-START" in text and "markers themselves" in text
    assert "whole new file" in text and "```python" in text and "<<<<<<< SEARCH" not in text
    diff = text_of(build_mutation_prompt(context(parent_files={"agent.py": MARKED})))
    assert "Edit only lines between the EVOLVE-BLOCK-START and EVOLVE-BLOCK-END markers" in diff


def test_large_file_is_clipped_with_a_marker_and_fences_survive_backticks() -> None:
    big = "def priority(item, bins):\n" + "".join(f"    x{n} = {n}  # ```\n" for n in range(5_000)) + "    return 0\n"
    text = text_of(build_mutation_prompt(context(parent_files={"agent.py": big}, max_file_chars=5_000)))
    assert "left out of this prompt" in text and "    x0 = 0" in text and "    return 0" in text
    assert "    x2500 = 2500" not in text
    assert "````python" in text  # a longer fence than any backtick run in the file


def test_lineage_keeps_the_last_steps() -> None:
    steps = [LineageStep(n, f"change number {n}", 0.5 + n / 100, 8) for n in range(30)]
    text = text_of(build_mutation_prompt(context(lineage=steps, max_lineage_steps=5)))
    assert "25 earlier step(s)" in text and "change number 29" in text and "change number 24" not in text
    assert "(+0.010)" in text  # the first step shown is compared with the one before it


def test_diagnosis_prompt_and_diagnosis_in_the_mutation_prompt() -> None:
    text = text_of(build_diagnosis_prompt(context()))
    for key in ("summary", "proposed_improvement", "implementation_plan"):
        assert f'"{key}"' in text
    assert "ZeroDivisionError" in text and SEED.rstrip() in text and "INSPIRED_CODE" not in text
    diagnosis = {
        "summary": "DIAG_SUMMARY",
        "proposed_improvement": "DIAG_IMPROVE",
        "implementation_plan": ["STEP_ONE", "STEP_TWO"],
    }
    text = text_of(build_mutation_prompt(context(diagnosis=diagnosis)))
    assert "Implement the diagnosis" in text and "DIAG_IMPROVE" in text and "2. STEP_TWO" in text
    # asymmetric information (SIA): the implementer sees the code and the plan, not the results or other agents
    assert SEED.rstrip() in text and "ZeroDivisionError" not in text and "INSPIRED_CODE" not in text
    assert "ZeroDivisionError" in text_of(build_mutation_prompt(context()))


def test_the_reviewer_reads_the_lineages_improvement_notes() -> None:
    from engine.mutators.prompt import note_markdown

    note = note_markdown({"summary": "S1", "proposed_improvement": "P1", "implementation_plan": ["a", "b"]})
    assert note == "**Summary**: S1\n\n**Proposed improvement**: P1\n\n**Implementation plan**: \n1. a\n2. b"
    text = text_of(build_diagnosis_prompt(context(notes=[(0, "ROOT_NOTE"), (3, note)])))
    assert "Improvement notes of this lineage" in text
    assert text.index("### Note on node 0\nROOT_NOTE") < text.index("### Note on node 3\n**Summary**: S1")
    assert "Improvement notes" not in text_of(build_diagnosis_prompt(context()))


def test_retry_message_lists_each_failure_with_closest_lines() -> None:
    failures = [
        BlockFailure(
            2,
            "agent.py",
            "    return np.ones_like(bins)\n",
            "SEARCH text not found in agent.py",
            "    return np.zeros_like(bins)",
            11,
        ),
        BlockFailure(
            4,
            "agent.py",
            "    x = 1\n",
            "the block changes lines 1-1, outside lines 6-6 of agent.py",
            "import numpy as np",
            1,
        ),
    ]
    message = build_retry_message(failures)
    assert message["role"] == "user"
    content = message["content"]
    assert "2 of your edits did not apply" in content
    assert "Block 2 (agent.py): SEARCH text not found" in content and "Block 4 (agent.py)" in content
    assert "np.ones_like" in content and "np.zeros_like" in content and "(line 11)" in content
    assert "outside lines 6-6" in content and "Do not repeat blocks that applied" in content
    assert "Nothing was applied" in build_retry_message(failures[:1], resend_all=True)["content"]
    rewrite = BlockFailure(
        1, "agent.py", "", "the rewrite changes line 9 of agent.py, outside lines 6-7", "    return scores", 9
    )
    content = build_retry_message([rewrite], answer_format="rewrite")["content"]
    assert "One of your edits did not apply" in content and "Edit 1 (agent.py)" in content
    assert "SEARCH" not in content and "whole file again" in content and "(line 9)" in content
    with pytest.raises(ValueError):
        build_retry_message([])


def test_unknown_answer_format_is_refused() -> None:
    with pytest.raises(ValueError):
        context(answer_format="patch")


def test_archive_mode_shows_the_archive_as_what_to_write_from() -> None:
    """ADAS: the policy asks the meta-agent to see the archive; the section says so and holds every agent."""
    archive = [
        Inspiration(n, 0.9 - n / 100, {"agent.py": f"def priority(item, bins):\n    return ARCHIVE_{n}\n"})
        for n in range(1, 13)
    ]
    text = text_of(build_mutation_prompt(context(inspirations=archive, archive_mode=True)))
    assert "The archive so far" in text and "write a new, better agent" in text
    assert all(f"ARCHIVE_{n}" in text for n in range(1, 13))
    plain = text_of(build_mutation_prompt(context()))
    assert "The archive so far" not in plain and "Other agents from the archive" in plain


@pytest.mark.slow
def test_a_decision_with_archive_context_widens_what_the_mutator_sees(tmp_path, instances_file) -> None:
    from archive import Archive
    from engine.loop.expansion import ARCHIVE_DONORS, DONORS, mutation_context
    from engine.loop.state import RunState
    from tasks.binpack.task import BinPackTask
    from tests.conftest import run_cli

    out = run_cli(
        "--budget",
        "30",
        "--workers",
        "2",
        "--sandbox",
        "process",
        "--instances",
        str(instances_file),
        "--run-dir",
        str(tmp_path),
        "--quiet",
    )
    assert out.returncode == 0, out.stderr
    path = next(tmp_path.glob("*/archive.duckdb"))
    with Archive.open(path, read_only=True) as archive:
        state = RunState.rebuild(archive, BinPackTask(instances_path=str(instances_file)))
        evaluated = int(((state.tree.n_evals[: state.tree.n] > 0) & state.tree.valid[: state.tree.n]).sum())
        plain = mutation_context(state, 0, {"rule": "widen"})
        wide = mutation_context(state, 0, {"context": "archive"})
    assert not plain.whole_archive and len(plain.donors) == min(DONORS, evaluated - 1)
    assert wide.whole_archive and len(wide.donors) == min(ARCHIVE_DONORS, evaluated - 1)
