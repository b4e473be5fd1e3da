"""`python -m engine.runs export RUN --traces FILE`: one record per child a mutator made, checked against the
archive, as JSON lines and as Parquet; an LLM run's records carry the messages sent and the answer."""

from __future__ import annotations

import json
import os
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest

from engine.runinfo.cli import main
from tests.engine.plots.run_fixture import shared_small_run
from tests.engine.test_search_e2e import only_run, read

FIELDS = {
    "run_id",
    "node_id",
    "parent_id",
    "mutator",
    "model",
    "key",
    "messages",
    "answer",
    "parent_files",
    "child_files",
    "diff",
    "description",
    "status",
    "reason",
    "dev_mean",
    "dev_evaluations",
    "parent_dev_mean",
    "delta",
    "calls",
    "tokens_in",
    "tokens_out",
    "cost_usd",
    "holdout_mean",
}


@pytest.fixture(scope="module")
def offline_run(tmp_path_factory) -> Path:
    return shared_small_run(tmp_path_factory)


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def parquet(path: Path) -> list[dict]:
    import pyarrow.parquet as pq

    rows = pq.read_table(path).to_pylist()
    return [{**r, "parent_files": dict(r["parent_files"]), "child_files": dict(r["child_files"])} for r in rows]


def files_of(run: Path, node: int) -> dict[str, str]:
    joined = "SELECT f.path, b.content FROM node_files f JOIN blobs b ON b.hash = f.hash"
    rows = read(run, f"{joined} WHERE node_id = {node}")
    return dict(rows)


def test_an_offline_run_exports_one_record_per_child_both_ways(offline_run, tmp_path, capsys):
    assert main(["export", str(offline_run), "--traces", str(tmp_path / "t.jsonl")]) == 0
    assert main(["export", str(offline_run), "--traces", str(tmp_path / "t.parquet")]) == 0
    records = jsonl(tmp_path / "t.jsonl")
    children = read(offline_run, "SELECT id, parent_id, status, reason, diff FROM nodes WHERE parent_id IS NOT NULL")
    assert f"{len(children)} trace records written" in capsys.readouterr().out
    assert [(r["node_id"], r["parent_id"], r["status"], r["reason"], r["diff"]) for r in records] == [
        (n, p, s, r or "", d or "") for n, p, s, r, d in sorted(children)
    ]
    assert parquet(tmp_path / "t.parquet") == records  # the same records, field by field
    dev = dict(read(offline_run, "SELECT node_id, avg(score) FROM evaluations WHERE split = 'dev' GROUP BY 1"))
    holdout = dict(read(offline_run, "SELECT node_id, avg(score) FROM evaluations WHERE split = 'holdout' GROUP BY 1"))
    assert any(r["holdout_mean"] is not None for r in records)  # the final node's
    (run_id,) = read(offline_run, "SELECT id FROM runs")[0]
    for r in records:
        assert set(r) == FIELDS
        assert r["run_id"] == run_id and r["mutator"] == "offline"
        assert r["messages"] is None and r["answer"] is None and r["calls"] == 0 and r["cost_usd"] == 0.0
        assert r["child_files"] == files_of(offline_run, r["node_id"])
        assert r["parent_files"] == files_of(offline_run, r["parent_id"])
        assert r["dev_mean"] == pytest.approx(dev.get(r["node_id"]))
        assert r["holdout_mean"] == pytest.approx(holdout.get(r["node_id"]))
        if r["dev_mean"] is not None:
            assert r["delta"] == pytest.approx(r["dev_mean"] - dev[r["parent_id"]])


def test_no_holdout_leaves_the_field_out_of_both_formats(offline_run, tmp_path):
    for name in ("t.jsonl", "t.parquet"):
        assert main(["export", str(offline_run), "--traces", str(tmp_path / name), "--no-holdout"]) == 0
    for records in (jsonl(tmp_path / "t.jsonl"), parquet(tmp_path / "t.parquet")):
        assert records and all(set(r) == FIELDS - {"holdout_mean"} for r in records)


@pytest.mark.parametrize(
    ("name", "message"),
    [("traces.csv", "ends in .jsonl or .parquet"), ("no/such/folder/t.jsonl", "no folder")],
)
def test_a_bad_file_name_is_one_line_and_exit_2(offline_run, tmp_path, capsys, name, message):
    assert main(["export", str(offline_run), "--traces", str(tmp_path / name)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err
    assert not (tmp_path / name).exists()


def test_an_existing_file_is_kept_unless_forced(offline_run, tmp_path, capsys):
    mine = tmp_path / "mine.jsonl"
    mine.write_text("my own data\n")
    assert main(["export", str(offline_run), "--traces", str(mine)]) == 2
    assert "--force" in capsys.readouterr().err
    assert mine.read_text() == "my own data\n"
    assert main(["export", str(offline_run), "--traces", str(mine), "--force"]) == 0
    assert jsonl(mine) and [p.name for p in tmp_path.iterdir()] == ["mine.jsonl"]  # no scratch file left


# ----- an LLM run through litellm against the loopback server ------------------------------------------------


def _answers(body: dict, n: int):
    from tests.engine.llm.openai_stub import Answer
    from tests.engine.test_llm_search import good_diff, parent_return_line

    messages = body["messages"]
    if len(messages) < 2:  # the run's probe of the server
        return Answer("OK")
    if n % 3 == 2:  # a syntax error: an invalid child
        line = parent_return_line(messages)
        broken = f"agent.py\n<<<<<<< SEARCH\n{line}\n=======\n    return -(bins\n>>>>>>> REPLACE\n"
        return Answer("Change: broken.\n\n" + broken)
    return Answer(good_diff(messages, n))


@pytest.fixture(scope="module")
def llm_run(tmp_path_factory) -> Path:
    from engine.front.cli import build_parser
    from engine.front.run import run_from_args
    from tests.conftest import small_instances
    from tests.engine.llm.openai_stub import OpenAIStub

    folder = tmp_path_factory.mktemp("llm-traces")
    instances = small_instances(folder / "instances.json")
    os.environ.setdefault("OPENAI_API_KEY", "sk-test")
    with OpenAIStub(_answers) as stub:
        argv = ["--model", "openai/stub", "--api-base", stub.url, "--budget", "10", "--workers", "1", "--seed", "1"]
        argv += ["--sandbox", "process", "--instances", str(instances), "--run-dir", str(folder / "runs"), "--quiet"]
        assert run_from_args(build_parser().parse_args(argv)) == 0
    return only_run(folder / "runs")


@pytest.mark.slow
def test_an_llm_run_exports_the_messages_and_the_answer(llm_run, tmp_path):
    assert main(["export", str(llm_run), "--traces", str(tmp_path / "t.jsonl")]) == 0
    assert main(["export", str(llm_run), "--traces", str(tmp_path / "t.parquet")]) == 0
    records = jsonl(tmp_path / "t.jsonl")
    assert parquet(tmp_path / "t.parquet") == records
    assert len(records) == read(llm_run, "SELECT count(*) FROM nodes WHERE parent_id IS NOT NULL")[0][0] >= 3
    calls = read(
        llm_run,
        "SELECT request->>'key', request->'messages', response->>'text', tokens_in, tokens_out, cost_usd "
        "FROM llm_calls WHERE error IS NULL AND request->>'key' LIKE 'parent %' ORDER BY id",
    )
    assert {r["status"] for r in records} == {"valid", "invalid"}
    for r in records:
        assert set(r) == FIELDS and r["mutator"] == "llm" and r["model"] == "openai/stub"
        mine = [c for c in calls if c[0].startswith(r["key"] + " ")]
        assert r["calls"] == len(mine) >= 1
        key, messages, answer, *_ = mine[-1]
        assert r["messages"] == json.loads(messages) and r["answer"] == answer
        assert [m["role"] for m in r["messages"]][:2] == ["system", "user"]
        assert r["tokens_in"] == sum(c[3] for c in mine) > 0 and r["tokens_out"] == sum(c[4] for c in mine) > 0
    invalid = [r for r in records if r["status"] == "invalid"]
    assert invalid and all("return -(bins" in r["answer"] and r["reason"] for r in invalid)
    assert main(["export", str(llm_run), "--traces", str(tmp_path / "valid.jsonl"), "--valid-only"]) == 0
    valid = jsonl(tmp_path / "valid.jsonl")
    assert valid and [r["node_id"] for r in valid] == [
        r["node_id"] for r in records if r["status"] == "valid" and r["dev_evaluations"] > 0
    ]
