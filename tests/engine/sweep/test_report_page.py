"""A sweep's HTML report (engine/sweep/report_page.py, `clade report SWEEP`): one self-contained file, its
charts inline SVG that parse, a link to each cell's run report that is there, never a user's file replaced,
and, in headless Chromium, curves on screen."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from engine.errors import UserError
from engine.report import main as report_main
from engine.report import write_report as write_run_report
from engine.sweep.report_page import MARK, nice_ticks, write_report
from engine.sweep.results import read_results
from tests.engine.sweep.sweep_fixture import copy_of, shared_sweep, synthetic_sweep
from tests.scripts.test_report import headless_chromium


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    return shared_sweep(tmp_path_factory)


@pytest.fixture(scope="module")
def model_sweep(tmp_path_factory):
    return synthetic_sweep(tmp_path_factory)


def svgs(page: str) -> dict[str, ET.Element]:
    """Every inline <svg> of the page, parsed as XML, by its id."""
    found = {}
    for text in re.findall(r"<svg\b.*?</svg>", page, flags=re.S):
        element = ET.fromstring(text)
        found[element.get("id", "")] = element
    return found


def assert_self_contained(page: str) -> None:
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, flags=re.I)
    assert "<script" not in page and "<link" not in page and "@import" not in page


def test_the_report_of_an_offline_sweep(sweep, tmp_path):
    copy = copy_of(sweep, tmp_path)
    target = write_report(copy)
    assert target == copy / "report.html"
    page = target.read_text()
    assert_self_contained(page)
    assert f'<meta name="generator" content="{MARK}">' in page
    results = read_results(copy)
    for cell in results.cells:
        assert f">{cell.cell}<" in page
    assert "hgm (baseline)" in page and "holdout excess %" in page
    assert re.search(r"<li>greedy (above|below|and) hgm", page)
    charts = svgs(page)
    assert set(charts) == {"by-evaluations"}  # no model: no chart against dollars
    chart = charts["by-evaluations"]
    lines = chart.findall("polyline")
    assert [line.findtext("title") for line in lines] == ["hgm", "greedy"]
    assert all(len(line.get("points", "").split()) >= 2 for line in lines)
    assert chart.findall("polygon")  # the bands (three seeds a group)
    texts = [t.text for t in chart.iter("text")]
    assert "dev evaluations spent" in texts and "best dev score so far" in texts
    assert "hgm (3 cells)" in texts and "greedy (3 cells)" in texts
    assert "10" in texts  # a tick of the evaluations' axis (1 to 12)


def test_a_cell_links_to_its_run_report_when_there_is_one(sweep, tmp_path):
    copy = copy_of(sweep, tmp_path)
    results = read_results(copy)
    run = results.cells[0].run_path
    assert run is not None
    write_run_report(run)
    target = write_report(copy, tmp_path / "elsewhere" / "sweep.html")  # a link relative to the page itself
    page = target.read_text()
    (href,) = re.findall(r'<a href="([^"]+)">', page)
    assert not href.startswith("/") and (target.parent / href).resolve() == (run / "report.html").resolve()
    assert f">{results.cells[0].cell}</a>" in page and f">{results.cells[1].cell}<" in page


def test_a_file_the_user_made_is_never_replaced(sweep, tmp_path):
    copy = copy_of(sweep, tmp_path)
    mine = copy / "report.html"
    mine.write_text("my notes on this sweep\n")
    with pytest.raises(UserError, match="exists and is not a sweep report Clade wrote"):
        write_report(copy)
    assert mine.read_text() == "my notes on this sweep\n"
    mine.unlink()
    first = write_report(copy)
    assert write_report(copy) == first  # its own report, replaced


def test_clade_report_finds_the_sweep(sweep, tmp_path, capsys):
    copy = copy_of(sweep, tmp_path)
    assert report_main([str(copy)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Report -> {copy / 'report.html'} (")
    (copy / "report.html").write_text("not ours")
    assert report_main([str(copy)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1 and "not a sweep report" in err


def test_a_model_sweep_has_a_chart_against_dollars(model_sweep, tmp_path):
    target = write_report(model_sweep, tmp_path / "report.html")
    page = target.read_text()
    assert_self_contained(page)
    charts = svgs(page)
    assert set(charts) == {"by-evaluations", "by-dollars"}
    dollars = charts["by-dollars"]
    assert [line.findtext("title") for line in dollars.findall("polyline")] == ["hgm", "dgm"]
    texts = [t.text or "" for t in dollars.iter("text")]
    assert "model dollars spent" in texts and "$0" in texts and any(t.startswith("$0.0") for t in texts)


def test_nice_ticks():
    assert nice_ticks(1, 12) == [2, 4, 6, 8, 10, 12]
    assert nice_ticks(0.48, 0.62) == pytest.approx([0.48, 0.5, 0.52, 0.54, 0.56, 0.58, 0.6, 0.62])
    assert nice_ticks(1, 84) == [20, 40, 60, 80]
    assert nice_ticks(0.0, 0.102) == pytest.approx([0.0, 0.02, 0.04, 0.06, 0.08, 0.1])
    assert nice_ticks(3, 3) == [3]


@pytest.mark.browser
def test_the_curves_render_in_headless_chromium(model_sweep, tmp_path):
    browser_path, sync_api = headless_chromium()
    page_file = write_report(model_sweep, tmp_path / "report.html")
    problems: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=browser_path)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
            page.on("request", lambda r: problems.append(r.url) if not r.url.startswith("file:") else None)
            page.goto(page_file.as_uri())
            for chart in ("#by-evaluations", "#by-dollars"):
                lines = page.locator(f"{chart} polyline.mean")
                assert lines.count() == 2
                for i in range(2):
                    box = lines.nth(i).bounding_box()
                    assert box is not None and box["width"] > 300 and box["height"] > 5  # drawn across the plot
                assert page.locator(f"{chart} polygon.band").count() >= 2
            assert "dgm and hgm" in page.inner_text("ul.sentences")
            shot = tmp_path / "report.png"
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    assert problems == []
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_page_names_its_folder(model_sweep: Path, tmp_path):
    page = write_report(model_sweep, tmp_path / "r.html").read_text()
    assert f"<title>Clade sweep: {model_sweep.name}</title>" in page and "cells   6: 6 done" in page
