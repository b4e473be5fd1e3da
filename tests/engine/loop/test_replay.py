"""`--replay` of runs made with several workers, against a real OpenAI-compatible server on loopback.

The original runs race W workers against answers of varying latency, so the
order of its decisions depends on timing; the replay must follow the
original's recorded events and grow the same tree without one model call.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest

from engine.front.cli import build_parser
from engine.front.run import run_from_args
from tests.engine.llm.openai_stub import Answer, OpenAIStub
from tests.engine.test_llm_search import good_diff, parent_return_line
from tests.engine.test_search_e2e import only_run, read

TREE = "SELECT id, parent_id, code_hash, status FROM nodes ORDER BY id"
NOT_APPLYING = (
    "Change: tweak.\n\nagent.py\n<<<<<<< SEARCH\n    return bins * 42\n=======\n    return bins\n>>>>>>> REPLACE\n"
)
MALFORMED = "I would make the priority prefer fuller bins, but I will not write code."


def varied(body: dict, n: int) -> Answer:
    """Answer n: a delay of 0 to 0.3 s; now and then a malformed answer or a block that does not apply
    (so retries, "... attempt 1", happen), else a diff that applies to the parent."""
    if len(body["messages"]) < 2:  # the run's probe of the server before it starts
        return Answer("OK")
    draw = random.Random(n)
    delay = draw.uniform(0.0, 0.3)
    roll = draw.random()
    if roll < 0.12:
        return Answer(MALFORMED, delay)
    if roll < 0.25:
        return Answer(NOT_APPLYING, delay)
    if roll < 0.32:  # a syntax error: an invalid child
        return Answer(
            "Change: broken.\n\nagent.py\n<<<<<<< SEARCH\n"
            + parent_return_line(body["messages"])
            + "\n=======\n    return -(bins - item\n>>>>>>> REPLACE\n",
            delay,
        )
    return Answer(good_diff(body["messages"], n), delay)


def search(*argv: str) -> int:
    return run_from_args(build_parser().parse_args([*argv, "--quiet"]))


@pytest.fixture
def stub(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIStub(varied) as server:
        yield server


def original_run(tmp_path, stub, instances_file, workers: int, *extra: str, model: str = "openai/stub"):
    assert (
        search(
            "--model",
            model,
            "--api-base",
            stub.url,
            "--workers",
            str(workers),
            "--budget",
            "20",
            "--seed",
            "3",
            "--instances",
            str(instances_file),
            "--run-dir",
            str(tmp_path / "orig"),
            *extra,
        )
        == 0
    )
    run = only_run(tmp_path / "orig")
    keys = [k for (k,) in read(run, "SELECT request->>'key' FROM llm_calls")]
    assert len(keys) >= 5 and any(k.endswith("attempt 1") for k in keys)  # retries were asked
    return run


def assert_replayed(tmp_path, stub, original, workers: int, *extra: str) -> Path:
    asked = len(stub.chat_requests())
    runs = tmp_path / f"replayed-{workers}"
    assert search("--replay", str(original), "--run-dir", str(runs), "--workers", str(workers), *extra) == 0
    replayed = only_run(runs)
    assert read(replayed, TREE) == read(original, TREE)
    assert read(replayed, "SELECT count(*) FROM llm_calls")[0][0] == 0
    assert len(stub.chat_requests()) == asked  # not one request reached the server
    evaluated = "SELECT node_id, instance_id FROM evaluations WHERE split = 'dev' ORDER BY ALL"
    assert read(replayed, evaluated) == read(original, evaluated)
    return replayed


@pytest.mark.slow
def test_a_two_worker_run_replays_to_the_same_tree(tmp_path, stub, instances_file):
    original = original_run(tmp_path, stub, instances_file, 2)
    assert_replayed(tmp_path, stub, original, 2)  # the default sandbox (auto: bwrap where it works)


@pytest.mark.slow
def test_a_four_worker_run_replays_with_any_workers(tmp_path, stub, instances_file):
    original = original_run(
        tmp_path,
        stub,
        instances_file,
        4,
        "--sandbox",
        "process",
        "--llm-concurrency",
        "3",
        model="openai/stub,openai/stub-b",
    )  # an ensemble: a model drawn per expansion
    written_by = "SELECT id, model FROM nodes ORDER BY id"
    assert {m for _, m in read(original, written_by)} >= {"openai/stub", "openai/stub-b"}
    for workers in (4, 2):
        replayed = assert_replayed(tmp_path, stub, original, workers)
        assert read(replayed, written_by) == read(original, written_by)
