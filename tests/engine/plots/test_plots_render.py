"""The renderers draw (one smoke test each), the SVG carries a tooltip per node, and plots replace only
files of their own."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

pytest.importorskip("matplotlib")

from engine.plots.lineage import lineage_data
from engine.plots.lineage_render import render_lineage
from engine.plots.output import PlotPathError, is_ours, parse_formats, plan_outputs
from engine.plots.progress import progress_data
from engine.plots.progress_render import render_progress

SVG = "{http://www.w3.org/2000/svg}"


def _node_titles(svg_path) -> dict[int, str]:
    root = ET.parse(svg_path).getroot()
    titles = {}
    for group in root.iter(f"{SVG}g"):
        if group.get("class") == "clade-node":
            title = group.find(f"{SVG}title")
            titles[int(group.get("id").removeprefix("clade-node-"))] = title.text
            assert group.find(f"{SVG}use") is not None or group.find(f"{SVG}path") is not None
    return titles


def test_lineage_renders_png_and_svg_with_a_title_per_node(synthetic_run, tmp_path):
    data = lineage_data(synthetic_run)
    written = render_lineage(data, [tmp_path / "lineage.png", tmp_path / "lineage.svg"])
    assert [p.name for p in written] == ["lineage.png", "lineage.svg"]
    assert (tmp_path / "lineage.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    titles = _node_titles(tmp_path / "lineage.svg")
    assert titles == {n.id: n.hover for n in data.nodes}  # every node, valid, invalid or failed
    final = data.final_node
    assert titles[final].startswith(f"node {final}: ") and ", mean " in titles[final]
    assert is_ours(tmp_path / "lineage.png", "lineage") and is_ours(tmp_path / "lineage.svg", "lineage")
    assert not is_ours(tmp_path / "lineage.png", "progress")


def test_progress_renders_runs_overlaid_with_a_dollar_panel(small_run, synthetic_run, tmp_path):
    series = progress_data([small_run, synthetic_run])
    render_progress(series, [tmp_path / "progress.png", tmp_path / "progress.svg"])
    assert (tmp_path / "progress.png").stat().st_size > 10_000
    svg = (tmp_path / "progress.svg").read_text()
    assert "dev evaluations" in svg and "LLM dollars" in svg
    assert is_ours(tmp_path / "progress.svg", "progress")


def test_plots_replace_only_their_own_files(tmp_path, synthetic_run):
    (tmp_path / "lineage.png").write_text("a user's picture")
    with pytest.raises(PlotPathError, match="--force"):
        plan_outputs(tmp_path, "lineage", ["png", "svg"], "lineage", force=False)
    assert plan_outputs(tmp_path, "lineage", ["png"], "lineage", force=True) == [(tmp_path / "lineage.png", True)]
    render_lineage(lineage_data(synthetic_run), [tmp_path / "lineage.png"])
    assert plan_outputs(tmp_path, "lineage", ["png", "svg"], "lineage", force=False) == [
        (tmp_path / "lineage.png", True),
        (tmp_path / "lineage.svg", False),
    ]
    new = tmp_path / "new" / "folder"
    assert plan_outputs(new, "progress", ["svg"], "progress", force=False) == [(new / "progress.svg", False)]
    assert new.is_dir()


def test_formats_are_png_and_svg_only():
    assert parse_formats("png, SVG,png") == ["png", "svg"]
    with pytest.raises(PlotPathError):
        parse_formats("pdf")
