"""Near-duplicate rejection of children: normalization, the offline MinHash index, and embeddings booked in
llm_calls."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest

from archive.store import Archive
from engine.llm import LLMClient, LLMSettings
from engine.mutators.novelty import EmbeddingNovelty, NoveltyIndex, normalized_source
from tests.engine.llm.openai_stub import Answer, OpenAIStub

REPO = Path(__file__).resolve().parents[3]
CIRCLES = (REPO / "agents_seed/circle_packing/agent.py").read_text()
FIRST_FIT = (REPO / "agents_seed/binpack/agent.py").read_text()
BEST_FIT = (REPO / "agents_seed/binpack/best_fit.py").read_text()
EMBED_MODEL = "openai/text-embedding-3-small"


def program(text: str, **more: str) -> dict[str, str]:
    return {"agent.py": text, **more}


def cosmetic_copy(text: str) -> str:
    """The circle packing seed with renamed locals, other comments and another layout: the same program."""
    out = (
        text.replace("gaps", "distances")
        .replace("ratio", "overlap")
        .replace("per_row", "columns")
        .replace("stagger", "shift")
        .replace("wall", "to_wall")
    )
    out = out.replace("# EVOLVE-BLOCK-START", "# EVOLVE-BLOCK-START  (tuned by hand)")
    out = out.replace("  # shrink every overlapping pair apart", "")
    out = out.replace(
        "x = (col + 0.5 + shift * (row % 2)) / columns", "x = (col+0.5+shift*(row%2)) / \\\n        columns"
    )
    return out.replace('"""Return (centers, radii) for 26 circles in the unit square."""', '"""Another docstring."""')


def indexed(*texts: str, **kwargs) -> NoveltyIndex:
    index = NoveltyIndex(**kwargs)
    for node_id, text in enumerate(texts, start=10):
        index.add(node_id, program(text))
    return index


def test_cosmetic_changes_normalize_to_the_same_text():
    copy = cosmetic_copy(CIRCLES)
    assert copy != CIRCLES
    assert normalized_source(program(copy), "agent.py") == normalized_source(program(CIRCLES), "agent.py")


def test_normalization_keeps_attributes_imports_and_builtins():
    text = normalized_source(program(CIRCLES), "agent.py")
    for kept in ("import numpy as np", "np.clip", "np.inf", "range(len(", ".max(axis=1)", "float("):
        assert kept in text
    for renamed in ("max_radii", "centers", "gaps", "stagger", "construct", "EVOLVE", "Return (centers"):
        assert renamed not in text


@pytest.mark.parametrize(
    "edit",
    [
        lambda t: t.replace("stagger = 0.5", "stagger = 0.52"),
        lambda t: t.replace("row % 2", "row // 2"),
        lambda t: t.replace("    y = (row + 0.5) / rows\n", "    y = (row + 0.5) / rows\n    x = x[::-1]\n"),
    ],
    ids=["constant", "operator", "statement"],
)
def test_real_changes_normalize_differently(edit):
    changed = edit(CIRCLES)
    assert changed != CIRCLES
    assert normalized_source(program(changed), "agent.py") != normalized_source(program(CIRCLES), "agent.py")


def test_files_in_path_order_and_unparsable_files_fall_back_to_their_text():
    two = {"b.py": "x = 1\n", "agent.py": "y = 2\n", "notes.txt": "keep   me"}
    text = normalized_source(two, "agent.py")
    assert text.index("# file agent.py") < text.index("# file b.py") < text.index("# file notes.txt")
    assert "keep   me" in text
    assert normalized_source({"agent.py": "def f(:\n   return   1"}, "agent.py").endswith("def f(: return 1")


def test_cosmetic_copy_is_rejected_naming_the_node():
    index = indexed(FIRST_FIT, CIRCLES)
    assert index.check(program(cosmetic_copy(CIRCLES))) == "near-duplicate of node 11 (normalized code identical)"


def test_one_changed_constant_in_a_forty_line_program_is_admitted():
    index = indexed(CIRCLES)
    assert index.check(program(CIRCLES.replace("stagger = 0.5", "stagger = 0.52"))) is None
    # ... also when the same edit comes with cosmetic changes
    assert index.check(program(cosmetic_copy(CIRCLES).replace("shift = 0.5", "shift = 0.52"))) is None


def test_new_statement_and_changed_operator_are_admitted():
    index = indexed(CIRCLES, FIRST_FIT)
    statement = "    y = (row + 0.5) / rows\n    x, y = np.where(row % 2 == 0, x, y), np.sort(y)\n"
    assert index.check(program(CIRCLES.replace("    y = (row + 0.5) / rows\n", statement))) is None
    index.add(12, program(BEST_FIT))
    assert index.check(program(BEST_FIT.replace("bins - item", "bins + item"))) is None


def test_one_token_edit_of_a_long_program_is_admitted_by_default_and_refused_at_a_lower_threshold():
    """One name changed in ~300 tokens alters 5 shingles (Jaccard ~0.97): admitted at the default 0.98, a
    near-duplicate at 0.95."""
    edited = program(CIRCLES.replace("np.minimum(k", "np.maximum(k"))
    reason = indexed(FIRST_FIT, CIRCLES, threshold=0.95).check(edited)
    assert reason is not None and reason.startswith("near-duplicate of node 11 (similarity 0.9")
    assert reason.endswith(">= 0.95)")
    assert indexed(FIRST_FIT, CIRCLES).check(edited) is None
    assert indexed(CIRCLES).check(program(BEST_FIT)) is None  # clearly different


def test_indexes_are_independent():
    first, second = indexed(CIRCLES), NoveltyIndex()
    assert first.check(program(CIRCLES)) is not None
    assert second.check(program(CIRCLES)) is None and len(second) == 0
    second.add(99, program(FIRST_FIT))
    assert first.check(program(FIRST_FIT)) is None


# ---- embeddings -------------------------------------------------------------------------------------------------


def test_embedding_novelty_rejects_a_near_identical_program_and_books_embed_calls(tmp_path):
    archive = Archive.create(tmp_path / "a.duckdb", "r", {}, seed=0)

    async def scenario(stub):
        client = LLMClient(archive, LLMSettings(api_base=stub.url, api_key="sk-test", max_retries=0))
        novelty = EmbeddingNovelty(client, EMBED_MODEL)
        await novelty.add(1, program(CIRCLES))
        await novelty.add(2, program(FIRST_FIT))
        copy = await novelty.check(program(cosmetic_copy(CIRCLES)), node_id=1)
        other = await novelty.check(program(BEST_FIT), node_id=2)
        return copy, other

    with OpenAIStub(lambda body, n: Answer("unused")) as stub:
        copy, other = asyncio.run(scenario(stub))
        sent = len(stub.embedding_requests)
    assert copy is not None and copy.startswith("near-duplicate of node 1 (embedding cosine 1.0000 > 0.995)")
    assert other is None
    rows = archive.query("SELECT purpose, model, node_id, tokens_in, error FROM llm_calls ORDER BY id")
    # the cosmetic copy normalizes to node 1's text: answered from the archive, not paid again
    assert sent == 3 and [r[:3] for r in rows] == [
        ("embed", EMBED_MODEL, 1),
        ("embed", EMBED_MODEL, 2),
        ("embed", EMBED_MODEL, 2),
    ]
    assert all(tokens > 0 and error is None for *_, tokens, error in rows)


def test_embed_vectors_come_back_in_order_and_replay_from_the_archive(tmp_path):
    archive = Archive.create(tmp_path / "a.duckdb", "r", {}, seed=0)
    with OpenAIStub(lambda body, n: Answer("unused"), embed=lambda text: [float(len(text)), 1.0]) as stub:
        live = LLMClient(archive, LLMSettings(api_base=stub.url, api_key="sk-test"))
        first = asyncio.run(live.embed(["abc", "a"], model=EMBED_MODEL, node_id=None))
    replay = LLMClient(archive, LLMSettings(replay_only=True))
    assert first == [[3.0, 1.0], [1.0, 1.0]]
    assert asyncio.run(replay.embed(["abc", "a"], model=EMBED_MODEL, node_id=None)) == first
    assert replay.spent().cached == 1 and replay.spent().by_purpose["embed"].calls == 1
    assert live.spent().cost_usd > 0  # litellm's own price of the embedding model
