"""The live page's one write: the answer to a `--mutator human` run's pending question, POSTed with the token
and the page's own header, lands where the search picks it up; without the token it is 401, without the header
or from another origin 403, too big 413, for a question no longer asked 409 (Starlette's TestClient, in process,
over a copy of the shared finished run with a question left pending in it)."""

from __future__ import annotations

import json
import shutil

import pytest

from engine.mutators.human_desk import Desk, Question, TerminalLines, answer_file

pytest.importorskip("starlette", reason="the live extra is not installed (pip install -e '.[live]')")
pytest.importorskip("httpx", reason="Starlette's TestClient needs httpx")

TOKEN = "a-token.for-this-test"
KEY = "parent 0 child 1 attempt 0"
OK = {"Authorization": f"Bearer {TOKEN}", "X-Clade-Answer": "1"}


@pytest.fixture
def asking(run, tmp_path):
    """A copy of the finished run with a question pending in it, as the human mutator leaves one."""
    import io

    folder = tmp_path / "runs" / run.name
    folder.mkdir(parents=True)
    shutil.copy(run / "archive.duckdb", folder / "archive.duckdb")
    desk = Desk(folder, lambda line: None, TerminalLines(io.StringIO("")))
    desk._pending(Question(KEY, 0, "mutate", [{"role": "user", "content": "make it better"}]))
    return folder


def test_the_pending_question_is_shown_and_answered_with_the_token(asking):
    from starlette.testclient import TestClient

    from engine.live.app import build_app
    from engine.live.sources import Sources

    url = f"/api/run/{asking.name}/human"
    c = TestClient(build_app(Sources([asking.parent]), TOKEN, "cookie"), base_url="http://testserver")
    body = json.dumps({"key": KEY, "answer": "Change: x.\n\nbetter code"})
    assert c.get(url).status_code == 401
    assert c.post(url, content=body, headers={"X-Clade-Answer": "1"}).status_code == 401  # no token: nothing read
    assert not answer_file(asking, KEY).exists()
    shown = c.get(url, headers=OK).json()["pending"]
    assert shown["key"] == KEY and shown["messages"][0]["content"] == "make it better"
    bearer_only = {"Authorization": f"Bearer {TOKEN}"}
    assert c.post(url, content=body, headers=bearer_only).status_code == 403  # a cross-site form sends no header
    assert c.post(url, content=body, headers={**OK, "Origin": "http://elsewhere.example"}).status_code == 403
    big = json.dumps({"key": KEY, "answer": "x" * 2_000_000})
    assert c.post(url, content=big, headers=OK).status_code == 413
    wrong = json.dumps({"key": "parent 9 child 9 attempt 0", "answer": "code"})
    assert c.post(url, content=wrong, headers=OK).status_code == 409
    assert c.post(url, content=b"not json", headers=OK).status_code == 400
    assert not answer_file(asking, KEY).exists()
    given = c.post(url, content=body, headers={**OK, "Origin": "http://testserver"})
    assert given.status_code == 200, given.text
    assert answer_file(asking, KEY).read_text() == "Change: x.\n\nbetter code"
    assert c.put(url, content=body, headers=OK).status_code == 405  # the one write is a POST
    assert c.post(f"/api/run/{asking.name}", content=body, headers=OK).status_code == 405


def test_the_page_holds_the_form_and_shows_no_question_when_none_waits(run):
    from starlette.testclient import TestClient

    from engine.live.app import build_app
    from engine.live.sources import Sources

    c = TestClient(build_app(Sources([run.parent])))
    assert c.get(f"/api/run/{run.name}/human").json() == {"pending": None}
    page = c.get(f"/run/{run.name}").text
    assert 'id="human-form"' in page and 'id="human-answer"' in page
