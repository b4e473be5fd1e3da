"""The archive's named reads (archive/reads_*.py): each works on a read-only archive, and the two rules of
answer lookup by key (a replay's and a resume's) are the ones their docstrings give."""

from __future__ import annotations

import inspect
import time
from datetime import datetime

import pytest

from archive import Archive, ArchiveError, LLMCallRecord
from archive.bulk import BulkWrites
from archive.live import live_file
from archive.reader import Reader
from archive.reads_arena import ArenaReads
from archive.reads_evaluations import EvaluationReads
from archive.reads_llm import LLMReads
from archive.reads_nodes import NodeReads
from archive.reads_report import ReportReads
from archive.reads_run import RunReads
from archive.reads_tables import TableReads
from archive.reads_traces import TraceReads
from engine.plots.synthetic import synthetic_archive

READERS = (Reader, NodeReads, EvaluationReads, LLMReads, ArenaReads, RunReads, ReportReads, TableReads, TraceReads)
SAMPLES = {  # a value for each parameter name the reads take
    "node": 1,
    "node_id": 1,
    "parent": 0,
    "ids": [0, 1, 2],
    "about": [0, 1],
    "nodes": [0, 1],
    "testers": [0],
    "split": "dev",
    "instance": "dev0",
    "limit": 3,
    "max_steps": 5,
    "max_chars": 40,
    "key": "parent 0 child 0 attempt 0",
    "request_hash": "r0",
    "purpose": "mutate",
    "reason_like": "synthetic%",
    "rules": ("re-measure",),
    "when": datetime(2025, 1, 1),
    "every_repeat": False,
    "arena_round": 1,
    "tester": 0,
    "agent": "best_fit",
    "name": "nodes",
    "table": "nodes",
    "column": "note",
}


def _reads() -> list[tuple[str, inspect.Signature]]:
    found = {}
    for cls in READERS:
        for name, fn in vars(cls).items():
            if inspect.isfunction(fn) and not name.startswith("_"):
                found[name] = inspect.signature(fn)
    return sorted(found.items())


def _ask_every_read(archive: Archive) -> None:
    for name, signature in _reads():
        params = [p for p in signature.parameters.values() if p.name != "self"]
        missing = [p.name for p in params if p.default is inspect.Parameter.empty and p.name not in SAMPLES]
        assert not missing, f"give SAMPLES a value for {missing} ({name})"
        args = {p.name: SAMPLES[p.name] for p in params if p.name in SAMPLES}
        getattr(archive, name)(**args)  # no error, no write: a read-only connection refuses writes


def test_every_named_read_answers_on_a_read_only_archive(tmp_path):
    path = synthetic_archive(tmp_path / "run.duckdb", n_nodes=40, seed=1)
    with Archive.open(path, read_only=True) as archive:
        _ask_every_read(archive)


def test_every_named_read_answers_on_a_running_searchs_live_copy(tmp_path):
    path = synthetic_archive(tmp_path / "run.duckdb", n_nodes=40, seed=1)
    with Archive.open(path) as writer:  # the engine's connection, keeping a copy for readers (archive/live.py)
        writer.set_status("running")
        writer.start_live_copy(interval=3600)  # the first copy at once, the next in an hour
        copy = live_file(path)
        deadline = time.monotonic() + 30
        while not copy.is_file():
            assert time.monotonic() < deadline, "no live copy was made"
            time.sleep(0.05)
        with Archive.open(copy, read_only=True) as archive:
            _ask_every_read(archive)
            assert archive.node_status_counts() == writer.node_status_counts()


def test_reads_give_the_synthetic_run_back(tmp_path):
    path = synthetic_archive(tmp_path / "run.duckdb", n_nodes=40, seed=1)
    with Archive.open(path, read_only=True) as archive:
        counts = archive.node_status_counts()
        assert sum(counts.values()) == 40 == archive.next_node_id() == archive.last_node_id() + 1
        assert list(counts) == sorted(counts)
        assert archive.n_dev_instances() == 16
        assert archive.evaluation_count("dev") == sum(archive.evaluation_status_counts("dev").values())
        stats = archive.dev_node_stats()
        assert stats[0].n == 16 and archive.evaluated_instances(0, "dev") == {f"dev{k}" for k in range(16)}
        assert archive.node(0).mutator == "seed" and archive.node(10_000) is None
        assert [c.id for c in archive.children(0)] == [n for n, p in archive.node_parents().items() if p == 0]
        totals = archive.llm_totals()
        assert (totals.calls, totals.errors) == (39, 0) and archive.llm_call_count("mutate") == 39
        assert archive.llm_spend() == (totals.cost_usd, totals.tokens_in, totals.tokens_out, totals.calls)
        assert archive.change_stamp()[:3] == (
            40,
            archive.evaluation_count("dev") + archive.evaluation_count("holdout"),
            39,
        )
        assert archive.wall_seconds() > 0


def _call(archive: Archive, n: int, key: str, text: str | None, error: str | None = None) -> None:
    response = None if error else {"text": text}
    archive.add_llm_call(LLMCallRecord(n, 0, "mutate", "m", f"h{n}", {"key": key}, response, 1, 1, 0.0, 0.1, error))


def test_a_replay_takes_an_answer_by_key_only_when_every_answer_agrees_a_resume_takes_the_first(tmp_path):
    with Archive.create(tmp_path / "a.duckdb", "r", {}, 0) as archive:
        _call(archive, 0, "agreed", None, error="Timeout: no answer")  # failed calls are never answers
        _call(archive, 1, "agreed", "same")
        _call(archive, 2, "agreed", "same")
        _call(archive, 3, "differs", "first")
        _call(archive, 4, "differs", "second")
        assert archive.llm_answer_for_key("agreed").id == 1 == archive.first_llm_answer_for_key("agreed").id
        assert archive.llm_answer_for_key("differs") is None  # a replay cannot know which the original used
        assert archive.first_llm_answer_for_key("differs").response == {"text": "first"}  # a resume never pays twice
        assert archive.llm_answer_for_key("never") is None and archive.first_llm_answer_for_key("never") is None


def test_add_rows_refuses_what_the_schema_lacks_and_writes_nothing_then(tmp_path):
    with Archive.create(tmp_path / "a.duckdb", "r", {}, 0) as archive:
        good = {"id": [0], "run_id": ["r"], "depth": [0], "status": ["valid"], "created_at": [datetime(2025, 1, 1)]}
        with pytest.raises(ArchiveError, match="no table"):
            archive.add_rows({"nodes": {**good, "mutator": ["seed"]}, "nope": {"x": [1]}})
        with pytest.raises(ArchiveError, match="has no"):
            archive.add_rows({"nodes": {**good, "mutator": ["seed"], "colour": ["red"]}})
        with pytest.raises(ArchiveError, match="differ in length"):
            archive.add_rows({"nodes": {**good, "mutator": ["seed", "seed"]}})
        assert archive.nodes() == []
        archive.add_rows({"nodes": {**good, "mutator": ["seed"]}})
        assert [n.id for n in archive.nodes()] == [0]
        assert isinstance(archive, BulkWrites)


def test_the_next_event_seq_moves_on_with_every_event(tmp_path):
    with Archive.create(tmp_path / "a.duckdb", "r", {}, 0) as archive:
        first = archive.next_event_seq
        assert archive.add_event("start") == first and archive.next_event_seq == first + 1
    with Archive.open(tmp_path / "a.duckdb") as archive:  # reopened: the sequence continues
        assert archive.next_event_seq == first + 1


def test_expansion_calls_are_grouped_by_the_expansion_key_they_carry(tmp_path):
    with Archive.create(tmp_path / "run", "r", {}, seed=0) as archive:
        keys = [
            "parent 3 child 1 attempt 0",
            "parent 3 child 1 diagnose",
            "parent 3 child 12 attempt 0",
            "self parent 2 child 0",
            "self_improve self parent 2 child 0 call 4",  # the self-editing agent's own call, through the gateway
            "agent node 5 instance dev0 call 1",  # an agent's call while evaluated: no expansion's
            "bootstrap try 0",
        ]
        for n, key in enumerate(keys):
            _call(archive, n, key, "answer", error="Timeout: slow" if n == 1 else None)
        grouped = {k: [c.id for c in calls] for k, calls in archive.expansion_calls().items()}
    assert grouped == {"parent 3 child 1": [0, 1], "parent 3 child 12": [2], "self parent 2 child 0": [3, 4]}
