"""`--embedding-model`: near-duplicate children found by embeddings and sent back to the model.

Whole searches through the command line (engine.front.cli.main, in this
process) against tests/engine/llm/openai_stub.py, a real OpenAI-compatible
server on loopback that answers chat and /v1/embeddings through litellm.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest

from engine.front.cli import main
from tests.conftest import small_instances
from tests.engine.llm.openai_stub import Answer, OpenAIStub
from tests.engine.test_llm_search import PARENT
from tests.engine.test_search_e2e import only_run, read

TREE = "SELECT id, parent_id, code_hash, status, reason FROM nodes ORDER BY id"
REJECTED = "near-duplicate of node"


def hashed_embedding(text: str, dims: int = 32) -> list[float]:
    """A stand-in embedding: equal texts give equal vectors, different texts near-orthogonal ones."""
    import numpy as np

    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    return np.random.default_rng(seed).standard_normal(dims).tolist()


def rewrite(code: str, description: str) -> Answer:
    return Answer(f"Change: {description}\n\nagent.py\n```python\n{code}\n```\n")


def renamed_copy(code: str) -> str:
    """The parent again: a local renamed and a comment added (the same program up to names and comments)."""
    return re.sub(r"\bgap\b", "slack", code).replace("def priority", "# tidied\ndef priority", 1)


def real_change(code: str, n: int) -> str:
    lines = code.splitlines()
    last = max(i for i, line in enumerate(lines) if line.strip().startswith("return "))
    lines[last : last + 1] = ["    gap = bins - item", f"    return -(gap ** {1 + n % 5}) + {n}.0 * 0"]
    return "\n".join(lines)


class Model:
    """Each expansion starts with a renamed copy of its parent; every other expansion keeps sending copies
    (a near-duplicate stored invalid), the others answer a sent-back copy with a real change."""

    def __init__(self) -> None:
        self.expansions = 0
        self.lock = threading.Lock()

    def __call__(self, body: dict, n: int) -> Answer:
        messages = body["messages"]
        if body.get("max_tokens") == 5:
            return Answer("OK")  # the probe
        code = PARENT.search(messages[1]["content"]).group(1)
        with self.lock:
            if len(messages) == 2:
                self.expansions += 1
            stubborn = self.expansions % 2 == 1
        sent_back = REJECTED in messages[-1]["content"]
        if sent_back and not stubborn:
            return rewrite(real_change(code, n), f"a real change {n}")
        return rewrite(renamed_copy(code), "tidy the names")


@pytest.fixture
def search(capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("COLUMNS", "250")

    def run(*args: str):
        capsys.readouterr()
        code = main(list(args))
        said = capsys.readouterr()
        return code, said.out, said.err

    return run


@pytest.mark.slow
def test_near_duplicates_are_sent_back_stored_invalid_and_replayed(search, tmp_path):
    runs = tmp_path / "runs"
    instances = small_instances(tmp_path / "instances.json", n_dev=2, n_holdout=1)
    with OpenAIStub(Model(), embed=hashed_embedding) as stub:
        code, out, err = search(
            "--model",
            "openai/stub",
            "--embedding-model",
            "openai/stub-embed",
            "--api-base",
            stub.url,
            "--answer-format",
            "rewrite",
            "--llm-concurrency",
            "1",
            "--budget",
            "8",
            "--seed",
            "1",
            "--instances",
            str(instances),
            "--sandbox",
            "process",
            "--run-dir",
            str(runs),
            "--quiet",
        )
        assert code == 0, out + err
        assert "near-duplicates by openai/stub-embed" in out
        run = only_run(runs)
        embeds = len(stub.embedding_requests)
        assert embeds >= 3 and all(body["model"] == "stub-embed" for body in stub.embedding_requests)
        asked = len(stub.chat_requests())

        purposes = dict(read(run, "SELECT purpose, count(*) FROM llm_calls GROUP BY 1"))
        assert purposes["embed"] == embeds  # every embedding booked, each text paid once
        assert purposes["retry"] >= 2
        rejected = read(run, f"SELECT id, reason FROM nodes WHERE reason LIKE '{REJECTED}%'")
        assert rejected and all("embedding cosine" in reason for _, reason in rejected)
        admitted = read(run, "SELECT id, description FROM nodes WHERE status = 'valid' AND id > 0")
        assert admitted and all(d.startswith("a real change") for _, d in admitted)
        # the conversation went on after a rejection: a 'retry' call whose prompt names the near-duplicate
        sent_back = [body for body in stub.chat_requests() if REJECTED in body["messages"][-1]["content"]]
        assert sent_back and all(body["messages"][-1]["role"] == "user" for body in sent_back)
        # a stubborn expansion: three calls (mutate, retry, retry), then its child stored as a near-duplicate
        keys = read(run, "SELECT request->>'key', purpose FROM llm_calls WHERE purpose <> 'embed' ORDER BY id")
        assert any(k.endswith("attempt 2") and p == "retry" for k, p in keys)
        # the seed and every valid node are in the index: their vectors were embedded (each once)
        booked = read(run, "SELECT DISTINCT node_id FROM llm_calls WHERE purpose = 'embed'")
        assert (0,) in booked

        replays = tmp_path / "replayed"
        code, out, err = search("--replay", str(run), "--run-dir", str(replays), "--quiet")
        assert code == 0, out + err
        assert len(stub.chat_requests()) == asked and len(stub.embedding_requests) == embeds  # nothing asked
    replayed = only_run(replays)
    assert read(replayed, TREE) == read(run, TREE)  # the same accept/reject decisions
    assert read(replayed, "SELECT count(*) FROM llm_calls")[0][0] == 0


def test_embedding_model_without_model_is_one_line(search, tmp_path):
    code, out, err = search("--embedding-model", "openai/text-embedding-3-small", "--run-dir", str(tmp_path / "r"))
    assert code == 2
    assert err.count("\n") == 1 and "--embedding-model needs --model" in err and "Traceback" not in err
    assert not (tmp_path / "r").exists()


def test_embedding_model_without_its_key_is_one_line(search, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # the chat model's key is there, the embedding model's not
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    code, out, err = search(
        "--model",
        "openai/gpt-4o-mini",
        "--embedding-model",
        "gemini/text-embedding-004",
        "--run-dir",
        str(tmp_path / "r"),
    )
    assert code == 2
    assert err.count("\n") == 1 and "GEMINI_API_KEY" in err and "gemini/text-embedding-004" in err
    assert not (tmp_path / "r").exists()
