"""--meta-recommendations and --evolve-prompts in a whole search, through litellm against the loopback
OpenAI-compatible stub: the tables, the children's links, the prompts that carry them, the booked calls, a
replay at no cost, a resume after a crash that does not pay twice, and the offline mutator's refusal."""

from __future__ import annotations

import json
import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest

from engine.errors import UserError
from engine.front.cli import build_parser
from engine.front.run import run_from_args
from engine.runinfo.info import node_info
from tests.engine.llm.openai_stub import Answer, OpenAIStub
from tests.engine.test_llm_search import good_diff
from tests.engine.test_search_e2e import only_run, read

EVERY = 2  # --meta-recommendations
PROMPT_EVERY = 2  # --prompt-evolve-interval
ADVICE = "1. Prefer the fullest bin that fits.\n2. Keep the code short.\n   Shorter code generalises.\n3. Stop {n}.\n"
NEW_PROMPT = "<PROMPT>You are a bold researcher number {n}: change one thing at a time and say why it helps.</PROMPT>"


class Scripted:
    """The probe, a numbered list for the scratchpad, a tagged prompt for the prompt writer, else a diff; the
    3rd, 4th and 5th mutation calls are malformed, so the 3rd expansion (at the first boundary) fails."""

    def __init__(self) -> None:
        self.mutations = 0

    def __call__(self, body: dict, n: int) -> Answer:
        messages = body["messages"]
        if len(messages) < 2:
            return Answer("OK")
        system = messages[0]["content"]
        if system.startswith("You review an automated search"):
            return Answer("Here they are:\n" + ADVICE.format(n=n))
        if system.startswith("You improve the instructions"):
            return Answer(NEW_PROMPT.format(n=n))
        self.mutations += 1
        if self.mutations in (3, 4, 5):
            return Answer("I would rather not write code.")
        return Answer(good_diff(messages, n))


def search(*argv: str) -> int:
    return run_from_args(build_parser().parse_args([*argv, "--quiet"]))


@pytest.fixture
def stub(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIStub(Scripted()) as server:
        yield server


@pytest.mark.slow
def test_recommendations_and_prompts_are_stored_linked_sent_and_replayed(tmp_path, stub, instances_file):
    common = (
        "--workers",
        "1",
        "--seed",
        "3",
        "--instances",
        str(instances_file),
        "--sandbox",
        "process",
        "--stages",
        "1:1",
        "--answer-format",
        "diff",
    )
    assert (
        search(
            "--model",
            "openai/stub",
            "--api-base",
            stub.url,
            "--budget",
            "10",
            "--meta-recommendations",
            str(EVERY),
            "--meta-recommendations-max",
            "2",
            "--evolve-prompts",
            "--prompt-evolve-interval",
            str(PROMPT_EVERY),
            "--run-dir",
            str(tmp_path / "orig"),
            *common,
        )
        == 0
    )
    run = only_run(tmp_path / "orig")
    versions = read(run, "SELECT version, written_at_nodes, text, llm_call_id FROM recommendations ORDER BY version")
    assert [v[0] for v in versions] == list(range(1, len(versions) + 1)) and versions
    # written when the children stored reached 4, 8, ...: the tree then had 5, 9, ... nodes
    assert [v[1] for v in versions] == [EVERY * k + 1 for k in range(1, len(versions) + 1)]
    assert all(v[2].startswith("1. Prefer the fullest bin") and v[2].count("\n") == 1 for v in versions)  # K = 2
    assert "Shorter code generalises" in versions[0][2] and "Stop" not in versions[0][2]  # item 3 left out
    calls = dict(read(run, "SELECT id, purpose FROM llm_calls"))
    assert {calls[v[3]] for v in versions} == {"meta"}

    # every child records what its prompt carried, and its first call's prompt holds exactly that
    children = read(
        run,
        "SELECT n.id, n.recommendations_version, n.prompt_id, c.request FROM nodes n JOIN llm_calls c "
        "ON c.request->>'key' = (SELECT e.detail->>'key' FROM events e WHERE e.kind = 'expand' "
        "AND CAST(e.detail->>'child' AS BIGINT) = n.id) || ' attempt 0' WHERE n.id > 0 ORDER BY n.id",
    )
    assert len(children) == read(run, "SELECT count(*) FROM nodes WHERE id > 0")[0][0] >= 5
    text_of = {v[0]: v[2] for v in versions}
    prompts = dict(read(run, "SELECT id, text FROM prompts"))
    for node, version, prompt_id, request in children:
        system, user = (m["content"] for m in json.loads(request)["messages"][:2])
        if version is None:
            assert node <= EVERY and "Recommendations from a review" not in user
        else:
            assert f"(version {version})\n{text_of[version]}" in user
        assert system.startswith(prompts[prompt_id])
    assert {c[1] for c in children} >= {None, 1}
    failed = read(run, "SELECT id, recommendations_version, prompt_id FROM nodes WHERE status = 'failed'")
    assert failed == [(3, 1, 1)]  # the first boundary's version and prompt, though it made no child

    population = read(run, "SELECT id, parent_id, text, written_at_nodes, llm_call_id FROM prompts ORDER BY id")
    assert population[0][1] is None and population[0][4] is None and population[0][2].startswith("You are an expert")
    assert len(population) >= 3 and all(p[1] is not None and calls[p[4]] == "prompt" for p in population[1:])
    assert [p[3] for p in population[1:]] == [PROMPT_EVERY * k + 1 for k in range(1, len(population))]
    assert len({c[2] for c in children}) >= 2  # UCB tried the new prompts (untried first)

    assert_shown(run, versions[-1][2], len(versions), len(population))
    node, version, prompt_id, _ = children[-1]
    assert node_info(run, node).prompted == (version, prompt_id)  # runs show --node

    # killed after the last boundary's calls returned, before their rows: a resume stores them without paying
    last = versions[-1]
    assert last[1] - 1 == read(run, "SELECT count(*) FROM nodes WHERE id > 0")[0][0] // EVERY * EVERY
    forget(run, last[0], population[-1][0])
    assert search("--resume", str(run), "--budget", "12") == 0
    same = "SELECT version, written_at_nodes, text, llm_call_id FROM recommendations ORDER BY version"
    assert read(run, same)[: len(versions)] == versions
    whole = "SELECT id, parent_id, text, written_at_nodes, llm_call_id FROM prompts ORDER BY id"
    assert read(run, whole)[: len(population)] == population
    keys = "SELECT request->>'key', count(*) FROM llm_calls WHERE purpose IN ('meta', 'prompt') GROUP BY 1"
    assert {n for _, n in read(run, keys)} == {1}  # every boundary asked once

    # a replay grows the same tree with the same links, and asks nothing
    asked = len(stub.chat_requests())
    replay = ("--replay", str(run), "--run-dir", str(tmp_path / "replayed"), "--workers", "1", "--sandbox", "process")
    assert search(*replay) == 0
    replayed = only_run(tmp_path / "replayed")
    links = "SELECT id, parent_id, code_hash, status, recommendations_version, prompt_id FROM nodes ORDER BY id"
    assert read(replayed, links) == read(run, links)
    assert read(replayed, same) == read(run, same)
    assert read(replayed, whole) == read(run, whole)
    assert read(replayed, "SELECT count(*) FROM llm_calls")[0][0] == 0
    assert len(stub.chat_requests()) == asked


def assert_shown(run, in_force: str, versions: int, prompts: int) -> None:
    """runs show, the report and the live page show the recommendations in force and the prompts."""
    from rich.console import Console

    from engine.live.view import run_view
    from engine.report import write_report
    from engine.runinfo.info import run_info
    from engine.runinfo.tables import show_tables

    console = Console(width=300, record=True)
    for table in show_tables(run_info(run)):
        console.print(table)
    shown = console.export_text()
    assert f"version {versions} of {versions}" in shown and in_force.splitlines()[0] in shown
    assert shown.count("You are a bold researcher") == prompts - 1
    page = write_report(run).read_text()
    live = run_view(run)["html"]["memory"]
    for html in (page, live):
        assert f"Recommendations (--meta-recommendations): {versions} versions" in html
        assert f"Prompts (--evolve-prompts): {prompts}," in html


def forget(run, version: int, prompt: int) -> None:
    """What a kill -9 between a paid call and its row leaves: the llm_calls row without the version's row."""
    import duckdb

    con = duckdb.connect(str(run / "archive.duckdb"))
    try:
        con.execute("DELETE FROM recommendations WHERE version = ?", [version])
        con.execute("DELETE FROM prompts WHERE id = ?", [prompt])
    finally:
        con.close()


def test_the_offline_mutator_refuses_them_in_one_line(tmp_path, instances_file):
    for flags in (("--meta-recommendations", "4"), ("--evolve-prompts",)):
        with pytest.raises(UserError, match="needs --model"):
            search("--budget", "4", "--instances", str(instances_file), "--run-dir", str(tmp_path / "runs"), *flags)
    assert not (tmp_path / "runs").exists()  # nothing made
