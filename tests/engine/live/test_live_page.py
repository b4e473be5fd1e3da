"""The live page's server (engine/live) through Starlette's TestClient on a finished run of a real search,
its charts, and `python -m engine.runs serve` as a user meets it: the URL, one-line errors, Ctrl-C."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from datetime import UTC
from pathlib import Path

import duckdb
import pytest

from tests.conftest import REPO

pytest.importorskip("starlette", reason="the live extra is not installed (pip install -e '.[live]')")
pytest.importorskip("httpx", reason="Starlette's TestClient needs httpx")


@pytest.fixture(scope="module")
def client(run):
    from starlette.testclient import TestClient

    from engine.live.app import build_app
    from engine.live.sources import Sources

    return TestClient(build_app(Sources([run.parent])))


def db(run: Path, sql: str):
    con = duckdb.connect(str(run / "archive.duckdb"), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


@pytest.mark.slow
def test_the_index_lists_the_run_with_the_columns_of_runs_list(client, run):
    from engine.runinfo.info import list_runs
    from engine.runinfo.tables import LIST_COLUMNS, list_cells

    data = client.get("/api/runs").json()
    assert data["columns"] == [c for c, _ in LIST_COLUMNS]
    (row,) = data["rows"]
    assert row["name"] == run.name and row["state"] == "finished"
    assert row["cells"] == list_cells(list_runs(run.parent)[0])  # exactly what `runs list` prints
    assert row["cells"][3] == "finished" and row["cells"][5] == "12"
    page = client.get("/")
    assert page.status_code == 200 and "/static/live.js" in page.text


def test_the_run_json_has_the_count_the_tree_and_the_charts(client, run):
    data = client.get(f"/api/run/{run.name}").json()
    n_nodes = db(run, "SELECT count(*) FROM nodes")[0][0]
    assert data["state"] == "finished" and data["live_as_of"] is None
    assert data["stop_reason"] == "budget spent"  # an early stop's line shows here as well
    assert data["dev_evals"] == 12 and data["budget"] == 12 and data["nodes"] == n_nodes
    final = db(run, "SELECT node_id FROM events WHERE kind = 'select_final'")[0][0]
    assert data["final"]["node"] == final
    html = data["html"]
    assert html["tree"].count('<g class="node ') == n_nodes
    assert 'class="path"' in html["tree"] or final == 0  # the final path is drawn (the seed has no edge)
    assert html["scores"].count("<circle") == 12 and "<svg" in html["lanes"] and "no model calls" in html["calls"]
    # a page that has this version gets only the state back
    same = client.get(f"/api/run/{run.name}", params={"since": data["version"]}).json()
    assert same["unchanged"] is True and "html" not in same and same["state"] == "finished"


def test_a_node_has_its_diff_evaluations_and_feedback(client, run):
    data = client.get(f"/api/run/{run.name}/node/1").json()
    node = data["node"]
    assert node["id"] == 1 and node["parent"] == 0
    assert (
        node["diff"].startswith("--- a/agent.py")
        and node["diff"] == db(run, "SELECT diff FROM nodes WHERE id = 1")[0][0]
    )
    assert len(node["evaluations"]) == db(run, "SELECT count(*) FROM evaluations WHERE node_id = 1")[0][0] > 0
    assert {"feedback", "score", "instance", "worker"} <= set(node["evaluations"][0])
    assert len(data["parent_evaluations"]) == db(run, "SELECT count(*) FROM evaluations WHERE node_id = 0")[0][0]
    assert data["n_dev_instances"] == 4


def test_unknown_runs_and_nodes_are_404_with_a_message(client, run):
    missing = client.get("/api/run/no-such-run")
    assert missing.status_code == 404 and "no run named 'no-such-run'" in missing.json()["error"]
    page = client.get("/run/no-such-run")
    assert page.status_code == 404 and "no run named" in page.text
    node = client.get(f"/api/run/{run.name}/node/999")
    assert node.status_code == 404 and "has no node 999" in node.json()["error"]
    assert client.get("/static/../../etc/passwd").status_code == 404
    assert client.get("/static/panel.js").status_code == 200


def test_the_pages_fetch_nothing_from_the_internet(client, run):
    for url in ("/", f"/run/{run.name}"):
        html = client.get(url).text
        assert not re.search(r"""\b(src|href)\s*=\s*["']?\s*(https?:|//)""", html, re.IGNORECASE)
        assert set(re.findall(r'(?:src|href)="(/static/[^"]+)"', html)) <= {
            "/static/live.js",
            "/static/panel.js",
            "/static/live.css",
            "/static/report.css",
        }


def test_a_run_held_by_a_search_without_a_live_copy_says_so(run, tmp_path):
    """A search that keeps no live copy (yet): the run is `in use by a running search`, nothing crashes."""
    from engine.live.view import run_view

    held = tmp_path / "held"
    held.mkdir()
    (held / "archive.duckdb").write_bytes((run / "archive.duckdb").read_bytes())
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys; con = duckdb.connect(sys.argv[1]); print('held', flush=True); sys.stdin.read()",
            str(held / "archive.duckdb"),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        data = run_view(held)
        assert data["state"] == "locked" and data["status"] == "in use by a running search"
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)


# ----- charts: pure functions ------------------------------------------------------------------------------


def test_best_so_far_follows_the_qualified_leader():
    from engine.live.charts import best_so_far

    # node 0 qualifies at 0.5; node 1 leads at 0.9 then falls to 0.5 (tied); node 2 then leads at 0.65
    got = best_so_far([(0, 0.5), (0, 0.5), (1, 0.9), (1, 0.9), (1, 0.0), (2, 0.6), (2, 0.7)], n_dev=2)
    assert got[:2] == [None, 0.5] and got[3] == pytest.approx(0.9) and got[4] == pytest.approx(0.6)
    assert got[-1] == pytest.approx(0.65)


def test_charts_escape_what_the_archive_holds_and_draw_running_evaluations():
    from datetime import datetime, timedelta

    from engine.live.charts import purpose_table, score_chart, worker_lanes

    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    lanes = worker_lanes(
        [("w<0>", t0, t0 + timedelta(seconds=2), 0.5, "ok", 1, "a&b"), ("w1", t0, None, None, "ok", 2, "c")],
        now=t0 + timedelta(seconds=4),
    )
    assert "w&lt;0&gt;" in lanes and "a&amp;b" in lanes and lanes.count("<rect") == 2 and "(4 s)" in lanes
    assert "<script>" not in purpose_table([("<script>", 2, 1, 10, 5, 0.01, 0)])
    assert "no dev evaluation" in score_chart([], [])


# ----- the command ----------------------------------------------------------------------------------------


def serve_cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "engine.runs", "serve", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def one_line_error(out: subprocess.CompletedProcess, text: str) -> None:
    assert out.returncode == 2, out.stdout + out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and out.stderr.startswith("error: ") and text in out.stderr


def test_what_a_user_gets_wrong_ends_in_one_line(run, tmp_path):
    one_line_error(serve_cli(str(tmp_path / "nowhere")), "does not exist")
    (tmp_path / "stuff").mkdir()
    (tmp_path / "stuff" / "notes.txt").write_text("x")
    one_line_error(serve_cli(str(tmp_path / "stuff")), "is not a run")
    one_line_error(serve_cli("--port", "70000"), "is not a port")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        one_line_error(serve_cli(str(run), "--port", str(taken.getsockname()[1])), "is in use")


def test_a_folder_of_runs_is_served_in_the_moment_a_search_makes_its_run(tmp_path):
    """A search makes its run's folder a moment before the archive in it: a page started then serves the folder
    (it refused it as "not a folder of runs", which failed the browser test in CI); files stay refused."""
    from archive import ArchiveError
    from engine.live.sources import check_source

    runs = tmp_path / "runs"
    (runs / "binpack-hgm-s0-20261127-175328").mkdir(parents=True)
    assert check_source(runs) == runs
    (runs / "notes.txt").write_text("x")
    with pytest.raises(ArchiveError, match="is not a run nor a folder of runs"):
        check_source(runs)


def test_without_the_extra_serve_says_how_to_install_it(monkeypatch, capsys):
    import importlib.util

    from engine.runinfo.cli import main

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None if name == "starlette" else object())
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "pip install" in err and "[live]" in err


def test_serve_prints_its_url_serves_and_stops_cleanly_on_ctrl_c(run):
    server = subprocess.Popen(
        [sys.executable, "-m", "engine.runs", "serve", str(run), "--port", "0"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        line = server.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line).group(0)
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(url + "api/runs", timeout=5) as answer:
                    assert run.name in answer.read().decode()
                break
            except OSError:
                assert time.monotonic() < deadline, "the server did not answer"
                time.sleep(0.2)
        server.send_signal(signal.SIGINT)
        out, err = server.communicate(timeout=20)
    finally:
        if server.poll() is None:
            server.kill()
    assert server.returncode == 0, err
    assert "Stopped." in out and "Traceback" not in err
