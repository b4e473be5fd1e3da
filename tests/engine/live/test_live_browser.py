"""The live page in a real headless Chromium while a real search runs in a subprocess: served beyond loopback
(0.0.0.0), it answers 401 without the token; opened with the token URL it loads, a link followed with the
cookie alone loads, its evaluation count grows without a reload, a click on a node shows its diff, and the
console stays clean.
Drives Debian's chromium through playwright (never downloads a browser), as tests/scripts/test_report.py."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import REPO, Hold
from tests.engine.test_live_readers import live_count
from tests.scripts.test_report import headless_chromium

pytestmark = [pytest.mark.browser, pytest.mark.slow]
LIVE_COPY = (REPO / "archive" / "live.py").exists()  # the engine keeps a live copy readers can open
DOCS_COPY = REPO / "docs" / "live-page.png"
GUARD_S = 300  # the longest any one wait may take before the test fails; each ends as soon as its event comes


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_for(check, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.25)


def url_line(server: subprocess.Popen) -> re.Match | None:
    """The URL once the server prints it; a server that ended says why, instead of a wait that runs out."""
    line = server.stdout.readline()
    if not line and server.poll() is not None:
        raise AssertionError(f"the server ended ({server.returncode}) before it printed its URL")
    return re.search(r"http://\S+:(\d+)/\?token=(\S+)", line)


def test_the_live_page_follows_a_running_search(tmp_path):
    browser_path, sync_api = headless_chromium()
    pytest.importorskip("starlette", reason="the live extra is not installed (pip install -e '.[live]')")
    runs = tmp_path / "runs"
    runs.mkdir()
    search = start(
        "engine.search",
        "--task",
        "binpack",
        "--budget",
        "60",
        "--workers",
        "2",
        "--run-dir",
        str(runs),
        "--quiet",
        "--sandbox",
        "process",  # the page is under test, not the sandbox: the same wherever docker or bwrap is or is not
        "--timeout",
        "600",  # far above any evaluation's: the engine's clock runs on while the test holds the search still
    )
    server = start("engine.runs", "serve", str(runs), "--port", "0", "--host", "0.0.0.0")
    problems: list[str] = []
    shot = tmp_path / "live-page.png"
    hold = Hold(search)
    try:
        # beyond loopback: a clear-text note (stderr, merged here), then the URL with the token
        shown = wait_for(lambda: url_line(server), GUARD_S, "the URL")
        url, token = f"http://127.0.0.1:{shown.group(1)}/", shown.group(2)
        run = wait_for(
            lambda: next((p for p in runs.iterdir() if (p / "archive.duckdb").is_file()), None), 60, "the run's archive"
        )
        if LIVE_COPY:  # an evaluation in its live copy, then the search held still until the page shows it
            wait_for(lambda: live_count(run) > 0 or search.poll() is not None, GUARD_S, "a first evaluation")
        assert hold.stop(), "the search ended before the page loaded"
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=browser_path)
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                # generous ceilings on every wait, not fixed waits: the page's server reads at autogroup nice 19
                # (engine/runinfo/yielding.py), so on a machine busy with other sessions it answers slowly
                page.set_default_timeout(GUARD_S * 1000)
                page.set_default_navigation_timeout(GUARD_S * 1000)
                page.on(
                    "console",
                    lambda m: (
                        problems.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning") else None
                    ),
                )
                page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
                page.on(
                    "request",
                    lambda req: problems.append(f"request: {req.url}") if not req.url.startswith(url) else None,
                )
                stranger = browser.new_context().new_page()  # no token, no cookie: 401 and nothing of the run
                refused = stranger.goto(f"{url}run/{run.name}")
                assert refused is not None and refused.status == 401 and run.name not in stranger.content()
                stranger.close()
                page.goto(f"{url}?token={token}")  # the URL printed: the token sets the cookie
                wait_for(lambda: page.url == url, 30, "the token to leave the address bar")
                page.click(f'a[href="/run/{run.name}"]')  # a link within the page: the cookie alone
                page.wait_for_url(f"{url}run/{run.name}")
                assert search.poll() is None, "the search ended before the page loaded"
                if not LIVE_COPY:  # the engine keeps no copy to read yet: the page says so and does not break
                    wait_for(lambda: "in use by a running search" in page.inner_text("#state"), 30, "the lock note")
                    page.screenshot(path=str(shot))
                    return

                def count() -> int | None:
                    text = page.inner_text("#eval-count").strip()
                    return int(text) if text.isdigit() else None

                first = wait_for(lambda: count() is not None and count(), GUARD_S, "an evaluation count") or 0
                assert "live, as of" in page.inner_text("#freshness") or search.poll() is not None
                # it grows without a reload (no navigation happens: the same document keeps polling)
                marker = page.evaluate("window.__clade_marker = Math.random()")
                hold.go_on()
                wait_for(lambda: (count() or 0) > first, GUARD_S, f"the count to grow past {first}")
                assert page.evaluate("window.__clade_marker") == marker
                # a click on a child opens its panel with its diff against its parent
                page.locator('#tree .node[data-id="1"]').wait_for()
                page.click('#tree .node[data-id="1"]')
                page.locator("#panel pre.diff").wait_for()
                panel = page.inner_text("#panel")
                assert "Node #1" in panel and "Diff against parent #0" in panel and "+++ b/agent.py" in panel
                assert "Evaluation logs" in panel
                page.screenshot(path=str(shot))  # during the run, the panel open
                # the open panel stays open while the page keeps updating
                page.wait_for_timeout(4500)
                assert "Node #1" in page.inner_text("#panel")
                assert page.locator('#tree .node.selected[data-id="1"]').count() == 1
                # after the search ends, the page says so (and stays useful)
                search.wait(timeout=300)
                wait_for(lambda: page.inner_text("#state").strip() == "finished", GUARD_S, "the finished state")
                assert page.inner_text("#eval-count").strip() == "60"
            finally:
                browser.close()
    finally:
        hold.go_on()
        stop(server)
        stop(search)
    assert problems == []
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000
    if os.environ.get("CLADE_KEEP_SCREENSHOT") == "1":
        shutil.copyfile(shot, DOCS_COPY)
