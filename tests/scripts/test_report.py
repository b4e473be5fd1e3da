"""scripts/report.py: one self-contained HTML file per run; in headless Chromium a click opens a node's panel."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import duckdb
import pytest

from engine.report.data import LIMITS, Clipper
from tests.conftest import REPO, small_instances
from tests.engine.test_search_e2e import only_run

HOSTILE = "</script><script>alert(1)</script><!-- <b>bold</b> & more"
SCREENSHOT_COPY = Path("/tmp/clade-report-screenshot.png")


def report_cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, str(REPO / "scripts" / "report.py"), *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def llm_run(tmp_path_factory) -> Path:
    """An LLM search through litellm's offline answers (valid, invalid and failed attempts, priced calls),
    one of whose evaluations printed hostile HTML."""
    from engine.front.cli import build_parser
    from engine.front.run import run_from_args
    from tests.engine.test_llm_search import ScriptedModel

    tmp = tmp_path_factory.mktemp("report")
    instances = small_instances(tmp / "instances.json", n_items=60)
    args = build_parser().parse_args(
        [
            "--model",
            "openai/gpt-4o-mini",
            "--budget",
            "20",
            "--workers",
            "2",
            "--seed",
            "2",
            "--instances",
            str(instances),
            "--run-dir",
            str(tmp / "runs"),
            "--sandbox",
            "process",
            "--quiet",
        ]
    )
    assert run_from_args(args, llm_mock=ScriptedModel()) == 0
    run = only_run(tmp / "runs")
    con = duckdb.connect(str(run / "archive.duckdb"))
    try:
        con.execute(
            "UPDATE evaluations SET stdout_tail = ? || stdout_tail WHERE node_id = ("
            "SELECT min(node_id) FROM evaluations WHERE node_id > 0)",
            [HOSTILE],
        )
    finally:
        con.close()
    return run


def embedded(html: str) -> dict:
    match = re.search(r'<script type="application/json" id="clade-data">(.*?)</script>', html, re.DOTALL)
    assert match
    return json.loads(match.group(1))


@pytest.mark.slow
def test_the_report_is_one_file_that_needs_no_network(llm_run):
    out = report_cli(str(llm_run))
    assert out.returncode == 0, out.stderr
    page = llm_run / "report.html"
    assert str(page) in out.stdout
    html = page.read_text()
    # nothing is fetched: no src or href to anywhere, no stylesheet link, no CSS url(), no @import
    assert not re.search(r"""\b(src|href)\s*=\s*["']?\s*(https?:|//)""", html, re.IGNORECASE)
    assert not re.search(r"<(link|img|iframe|object|embed)\b", html, re.IGNORECASE)
    assert "url(" not in html and "@import" not in html
    assert not re.search(r"<script[^>]*\bsrc=", html, re.IGNORECASE)
    data = embedded(html)
    con = duckdb.connect(str(llm_run / "archive.duckdb"), read_only=True)
    try:
        n_nodes, n_calls = con.execute(
            "SELECT (SELECT count(*) FROM nodes), (SELECT count(*) FROM llm_calls)"
        ).fetchone()
        statuses = {s for (s,) in con.execute("SELECT DISTINCT status FROM nodes").fetchall()}
    finally:
        con.close()
    assert len(data["nodes"]) == n_nodes and sum(len(n["llm_calls"]) for n in data["nodes"]) == n_calls
    assert {"valid", "invalid"} <= statuses
    # the tree is drawn in the page: one clickable group per node, coloured by score
    assert html.count('<g class="node ') == n_nodes
    fills = set(re.findall(r'<circle class="dot" r="[\d.]+" fill="(#[0-9a-f]{6})"', html))
    assert len(fills) >= 3
    # run config and spend at the top
    assert "Run config" in html and "LLM spend" in html and "openai/gpt-4o-mini" in html


def test_each_child_carries_the_calls_that_made_it(llm_run, tmp_path):
    out = report_cli(str(llm_run), "--out", str(tmp_path / "r.html"))
    assert out.returncode == 0, out.stderr
    nodes = {n["id"]: n for n in embedded((tmp_path / "r.html").read_text())["nodes"]}
    llm_children = [n for n in nodes.values() if n["mutator"] == "llm" and n["status"] == "valid"]
    assert llm_children
    for node in llm_children:
        assert node["llm_calls"], node["id"]
        call = node["llm_calls"][-1]
        assert call["messages"][0]["role"] == "system" and "Current code" in call["messages"][1]["content"]
        assert call["answer"] and "SEARCH" in call["answer"]
        assert node["diff"].startswith("--- a/agent.py")
    retried = [n for n in nodes.values() if any(c["purpose"] == "retry" for c in n["llm_calls"])]
    assert retried and retried[0]["llm_calls"][0]["purpose"] == "mutate"  # the first try and its retry, in order


def test_what_an_agent_printed_cannot_break_the_page(llm_run, tmp_path):
    assert report_cli(str(llm_run), "--out", str(tmp_path / "r.html")).returncode == 0
    html = (tmp_path / "r.html").read_text()
    assert html.count("</script>") == 2  # the data's and the code's own closing tags, nothing from the archive
    assert "<script>alert(1)" not in html and "<b>bold</b>" not in html
    logs = [e["stdout"] for n in embedded(html)["nodes"] for e in n["evaluations"] if e["stdout"]]
    assert any(log.startswith(HOSTILE) for log in logs)  # kept as text, exactly


def test_long_texts_are_cut_with_a_note():
    clip = Clipper(total=50_000)
    log = "x" * 10 + "y" * LIMITS["log"]
    kept = clip(log, "log", keep="tail")
    assert kept.endswith("y" * LIMITS["log"]) and "10 characters cut" in kept
    diff = "d" * (LIMITS["diff"] + 5)
    cut = clip(diff, "diff")
    assert cut.startswith("d" * LIMITS["diff"]) and "5 characters cut" in cut
    assert "size limit" in clip("z" * 20_000, "message")  # the report's total is spent
    assert clip("short", "message") == "short" and clip(None, "log") is None


def test_a_large_run_gives_a_bounded_report(tmp_path):
    from engine.plots.synthetic import synthetic_archive

    archive = synthetic_archive(tmp_path / "big.duckdb", n_nodes=400, seed=1)
    out = report_cli(str(archive), "--out", str(tmp_path / "big.html"))
    assert out.returncode == 0, out.stderr
    html = (tmp_path / "big.html").read_text()
    assert html.count('<g class="node ') == 400
    assert len(html) < 3_000_000


def test_a_bad_path_is_one_line(tmp_path):
    out = report_cli(str(tmp_path / "nowhere"))
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and out.stderr.startswith("error: ")


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def headless_chromium():
    """Chromium's path and playwright's sync API; the test skips, saying which is missing, without them."""
    browser_path = chromium_path()
    if browser_path is None:
        pytest.skip("no chromium on PATH (Debian: apt-get install chromium)")
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright not installed (pip install -e '.[browser]')"
    )
    return browser_path, sync_api


@pytest.mark.slow
@pytest.mark.browser
def test_clicking_a_node_in_headless_chromium_opens_its_panel(llm_run, tmp_path):
    browser_path, sync_api = headless_chromium()
    page_file = tmp_path / "report.html"
    assert report_cli(str(llm_run), "--out", str(page_file)).returncode == 0
    data = embedded(page_file.read_text())
    nodes = {n["id"]: n for n in data["nodes"]}
    target = min(
        n["id"]
        for n in nodes.values()
        if n["mutator"] == "llm" and n["status"] == "valid" and n["llm_calls"] and n["evaluations"]
    )
    hostile = next(
        n["id"] for n in nodes.values() if any((e["stdout"] or "").startswith(HOSTILE) for e in n["evaluations"])
    )
    node = nodes[target]
    added = next(line for line in node["diff"].splitlines() if line.startswith("+") and not line.startswith("+++"))
    problems: list[str] = []
    shot = tmp_path / "report.png"
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=browser_path)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
            page.on("dialog", lambda dialog: (problems.append(f"dialog: {dialog.message}"), dialog.dismiss()))
            page.on(
                "request",
                lambda req: problems.append(f"request: {req.url}") if not req.url.startswith("file:") else None,
            )
            page.goto(page_file.as_uri())
            assert "Click a node" in page.inner_text("#panel")
            # the node with hostile output: its text is shown as text, no script runs
            page.click(f'#tree .node[data-id="{hostile}"]')
            page.locator("#panel details.item", has_text="stdout").first.click()
            page.get_by_text("Evaluation logs").scroll_into_view_if_needed()
            assert HOSTILE in page.inner_text("#panel")
            # a real click on an LLM child: its panel shows what it is, its diff, scores, prompt and answer
            page.click(f'#tree .node[data-id="{target}"]')
            panel = page.inner_text("#panel")
            assert f"Node #{target}" in panel and node["description"] in panel
            assert f"Diff against parent #{node['parent']}" in panel and added in panel
            assert "Scores per instance" in panel and node["evaluations"][0]["instance"] in panel
            # the last model call is open: its prompt and answer are on screen (labels are upper-cased by CSS)
            assert "prompt: system" in panel.lower() and "Current code" in panel and "answer" in panel.lower()
            assert node["llm_calls"][-1]["answer"].splitlines()[0] in panel
            assert page.locator(f'#tree .node.selected[data-id="{target}"]').count() == 1
            assert page.evaluate("location.hash") == f"#node-{target}"
            page.screenshot(path=str(shot))
        finally:
            browser.close()
    assert problems == []
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 30_000
    assert int.from_bytes(png[16:20], "big") == 1400 and int.from_bytes(png[20:24], "big") == 900
    try:
        shutil.copyfile(shot, SCREENSHOT_COPY)  # for a person to look at
    except OSError:
        pass


# ----- trajectories: a node's agents' steps, and the steps its parent took to make it ---------------------


def test_a_node_carries_its_trajectories_escaped_and_bounded(tmp_path):
    from tests.engine.test_runs_cli import SCRIPT, trajectory_run

    run = trajectory_run(tmp_path)
    out = report_cli(str(run), "--out", str(tmp_path / "r.html"))
    assert out.returncode == 0, out.stderr
    html = (tmp_path / "r.html").read_text()
    assert SCRIPT not in html and "<script>alert(1)" not in html  # an agent's action is never markup
    assert html.count("</script>") == 2 and "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e" in html
    data = embedded(html)
    assert data["has_steps"] is True
    nodes = {n["id"]: n for n in data["nodes"]}
    made = nodes[1]["expansion_steps"]
    assert [s["tool"] for s in made] == ["view", "edit", "finish"] and nodes[1]["expansion_more"] == 0
    assert made[1] == {
        "step": 1,
        "tool": "edit",
        "action": "path=agent.py new=print(1)",
        "result": "edited agent.py",
        "tokens_in": 1000,
        "tokens_out": 80,
        "time_s": 2.0,
    }
    evals = {e["instance"]: e for e in nodes[1]["evaluations"]}
    first = evals["inst-a"]["steps"][0]
    assert first["action"] == f"echo '{SCRIPT}'"  # kept as text, exactly
    assert first["result"].startswith("x" * 300) and "708 more characters" in first["result"]
    assert len(evals["inst-b"]["steps"]) == 50 and evals["inst-b"]["steps_more"] == 10
    assert "expansion_steps" not in nodes[0] and "steps" not in nodes[0]["evaluations"][0]
    assert nodes[1]["note"].endswith(f"view first {SCRIPT}") and nodes[0]["note"] is None  # the improvement note


def test_an_archive_without_the_trajectory_table_reports_fine(tmp_path):
    from tests.engine.test_runs_cli import trajectory_run

    run = trajectory_run(tmp_path, drop_table=True)
    out = report_cli(str(run), "--out", str(tmp_path / "r.html"))
    assert out.returncode == 0, out.stderr
    data = embedded((tmp_path / "r.html").read_text())
    assert data["has_steps"] is False and len(data["nodes"]) == 2
    assert all(n["note"] is None for n in data["nodes"])  # an archive older than notes too
    assert not any("expansion_steps" in n or any("steps" in e for e in n["evaluations"]) for n in data["nodes"])


@pytest.mark.slow
@pytest.mark.browser
def test_a_nodes_trajectories_in_headless_chromium(tmp_path):
    from tests.engine.test_runs_cli import SCRIPT, trajectory_run

    browser_path, sync_api = headless_chromium()
    page_file = tmp_path / "report.html"
    assert report_cli(str(trajectory_run(tmp_path)), "--out", str(page_file)).returncode == 0
    problems: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=browser_path)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
            page.on("dialog", lambda dialog: (problems.append(f"dialog: {dialog.message}"), dialog.dismiss()))
            page.goto(page_file.as_uri())
            page.click('#tree .node[data-id="1"]')
            panel = page.inner_text("#panel")
            assert "How this node was made" in panel and "edited agent.py" in panel
            assert "Improvement note (the review that planned this change)" in panel and "it edits blind" in panel
            assert "Agent steps per evaluation (2)" in panel
            page.locator("#panel details.steps", has_text="inst-a").first.click()
            page.locator("#panel details.steps", has_text="inst-b").first.click()
            panel = page.inner_text("#panel")
            assert f"echo '{SCRIPT}'" in panel and "10 more steps not shown" in panel
            assert "inst-b · dev · timeout · score 0.500 · 60 steps" in panel
            assert page.locator("#panel script").count() == 0
            page.click('#tree .node[data-id="0"]')
            assert "the seed: no parent made it" in page.inner_text("#panel")
        finally:
            browser.close()
    assert problems == []
