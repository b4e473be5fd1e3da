"""examples/tutorial.ipynb as committed: a valid notebook, without outputs (tests/scripts/test_check_wheel.py runs
it top to bottom against the installed wheel)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import REPO

NOTEBOOK = REPO / "examples" / "tutorial.ipynb"


def test_the_tutorial_is_a_valid_notebook_committed_without_outputs():
    nbformat = pytest.importorskip("nbformat", reason="nbformat (the dev extra) is not installed")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code, "the tutorial has no code"
    assert all(cell.outputs == [] and cell.execution_count is None for cell in code)


def test_the_tutorial_searches_tabulates_plots_compares_and_resumes():
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    source = "\n".join("".join(cell["source"]) for cell in cells)  # a cell's source: a list of lines
    for needed in ("clade.search(", "run.nodes()", "plot_lineage()", '"hgm"', '"dgm"', "--resume"):
        assert needed in source, needed
