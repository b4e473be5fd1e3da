"""`clade.open_sweep` and `clade.Sweep`: a sweep's cells, groups, differences, sentences and curves from Python,
checked against its runs as `clade.open_run` reads them and against what `clade sweep show` prints."""

from __future__ import annotations

import math

import pytest

import clade
from engine.sweep.show import main as show_main
from tests.engine.sweep.sweep_fixture import POLICIES, SEEDS, copy_of, set_status, shared_sweep, synthetic_sweep


@pytest.fixture(scope="module")
def sweep_path(tmp_path_factory):
    return shared_sweep(tmp_path_factory)


def rows(table) -> list[dict]:
    """A DataFrame's or an Arrow table's rows as dicts (missing values as None)."""
    if hasattr(table, "to_pylist"):
        return table.to_pylist()
    return [{k: None if _missing(v) else v for k, v in row.items()} for row in table.to_dict("records")]


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def test_open_sweep_is_exported_and_says_what_it_opened(sweep_path):
    assert {"open_sweep", "Sweep"} <= set(dir(clade))
    sweep = clade.open_sweep(sweep_path)
    assert isinstance(sweep, clade.Sweep)
    assert sweep.path == sweep_path.resolve() and sweep.task == "binpack"
    assert sweep.groups == list(POLICIES) and sweep.seeds == SEEDS
    assert repr(sweep) == f"Sweep({str(sweep_path.resolve())!r}, task='binpack', groups=['hgm', 'greedy'])"
    assert clade.open_sweep(sweep_path / "sweep.json").path == sweep.path


def test_cells_match_each_runs_best_node(sweep_path):
    import pandas as pd

    sweep = clade.open_sweep(sweep_path)
    table = sweep.cells()
    assert isinstance(table, pd.DataFrame)
    assert list(table.columns) == [
        "cell",
        "group",
        "seed",
        "policy",
        "status",
        "final_node",
        "holdout",
        "holdout_raw",
        "dev_evaluations",
        "budget",
        "dollars",
        "tokens",
        "wall_s",
        "run_path",
    ]
    cells = rows(table)
    assert [(c["group"], c["seed"]) for c in cells] == [(p, s) for p in POLICIES for s in SEEDS]
    for c in cells:
        run = sweep.run(c["cell"])
        best = run.best()
        assert c["policy"] == c["group"] and c["status"] == run.status == "finished"
        assert (c["final_node"], c["holdout"]) == (best.id, best.holdout_mean)
        assert str(run.path) == c["run_path"] and run.config.search.seed == c["seed"]
        assert c["dev_evaluations"] == c["budget"] == 12 and c["dollars"] == 0 and c["tokens"] == 0


def test_table_and_differences_agree_with_the_cells(sweep_path):
    sweep = clade.open_sweep(sweep_path)
    cells = rows(sweep.cells())
    groups = rows(sweep.table())
    assert [g["group"] for g in groups] == list(POLICIES) and [g["baseline"] for g in groups] == [True, False]
    for g in groups:
        scores = [c["holdout"] for c in cells if c["group"] == g["group"]]
        assert (g["done"], g["cells"], g["seeds_contested"]) == (3, 3, 3)
        assert g["mean"] == pytest.approx(sum(scores) / 3)
        assert g["low"] <= g["mean"] <= g["high"] and min(scores) <= g["low"] and g["high"] <= max(scores)
    (d,) = rows(sweep.differences())
    by = {(c["group"], c["seed"]): c["holdout"] for c in cells}
    paired = [by[("greedy", s)] - by[("hgm", s)] for s in SEEDS]
    assert (d["group"], d["baseline"], d["paired"]) == ("greedy", "hgm", 3)
    assert d["mean"] == pytest.approx(sum(paired) / 3)
    assert d["verdict"] in ("above", "below", "no difference") and d["sentence"] == sweep.sentences()[0]
    (flipped,) = rows(sweep.differences(baseline="greedy"))
    assert flipped["group"] == "hgm" and flipped["mean"] == pytest.approx(-d["mean"])
    assert [g["baseline"] for g in rows(sweep.table(baseline="greedy"))] == [False, True]


def test_sentences_are_what_show_prints(sweep_path, capsys):
    sweep = clade.open_sweep(sweep_path)
    assert show_main([str(sweep_path), "--baseline", "greedy"]) == 0
    out = capsys.readouterr().out
    (sentence,) = sweep.sentences(baseline="greedy")
    assert sentence.startswith("hgm ") and sentence in out.splitlines()


def test_curves_in_long_format(sweep_path):
    sweep = clade.open_sweep(sweep_path)
    curves = rows(sweep.curves())
    assert {c["group"] for c in curves} == set(POLICIES)
    hgm = [c for c in curves if c["group"] == "hgm"]
    assert [c["x"] for c in hgm] == [float(x) for x in range(1, 13)]
    means = [c["mean"] for c in hgm if c["mean"] is not None and not math.isnan(c["mean"])]
    assert means and means == sorted(means)  # best so far never goes down
    last = hgm[-1]
    assert last["low"] <= last["mean"] <= last["high"]
    assert rows(sweep.curves("dollars")) == []  # the offline mutator spends nothing
    with pytest.raises(clade.UserError, match="'evaluations' or 'dollars'"):
        sweep.curves("time")


def test_curves_against_dollars_of_model_runs(tmp_path_factory):
    sweep = clade.open_sweep(synthetic_sweep(tmp_path_factory))
    curves = rows(sweep.curves("dollars"))
    assert {c["group"] for c in curves} == {"hgm", "dgm"}
    from engine.plots.progress import progress_series

    # the grid runs from $0 to the most any cell had spent by its last evaluation (what it spent after that,
    # on children never evaluated, is in its spend but on no curve)
    cells = rows(sweep.cells())
    at_last = max(float(progress_series(c["run_path"]).dollars[-1]) for c in cells)
    assert min(c["x"] for c in curves) == 0 and max(c["x"] for c in curves) == pytest.approx(at_last)
    assert 0 < at_last <= max(c["dollars"] for c in cells)


def test_a_cell_not_done_has_no_holdout_and_is_left_out(sweep_path, tmp_path):
    copy = copy_of(sweep_path, tmp_path)
    set_status(copy, "policy-greedy_s0", "interrupted")
    sweep = clade.open_sweep(copy)
    cell = next(c for c in rows(sweep.cells()) if c["cell"] == "policy-greedy_s0")
    assert cell["status"] == "interrupted" and cell["holdout"] is None
    greedy = rows(sweep.table())[1]
    assert (greedy["done"], greedy["cells"], greedy["seeds_contested"]) == (2, 3, 2)
    assert rows(sweep.differences())[0]["paired"] == 2


def test_mistakes_are_user_errors(sweep_path, tmp_path):
    with pytest.raises(clade.UserError, match="is not a sweep"):
        clade.open_sweep(tmp_path)
    sweep = clade.open_sweep(sweep_path)
    with pytest.raises(clade.UserError, match="no cell 'policy-uct_s0'"):
        sweep.run("policy-uct_s0")
    with pytest.raises(clade.UserError, match="no group 'uct'"):
        sweep.table(baseline="uct")
    copy = copy_of(sweep_path, tmp_path / "copy")
    (copy / "report.html").write_text("mine")
    with pytest.raises(clade.UserError, match="not a sweep report Clade wrote"):
        clade.open_sweep(copy).report()


def test_report(sweep_path, tmp_path):
    sweep = clade.open_sweep(copy_of(sweep_path, tmp_path))
    target = sweep.report()
    assert target == sweep.path / "report.html" and "<svg" in target.read_text()
    assert sweep.report(tmp_path / "other.html") == tmp_path / "other.html"
