"""The Python API (`clade.search`, `clade.open_run`, `clade.Run`): as a user types it, in a fresh process where
the docs say so, and against the archive's own tables where a figure must be right."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import pytest

import clade
from archive.schema import TABLES
from tests.conftest import REPO, small_instances

PAGES = [REPO / "docs" / "guide" / "python-api.md", REPO / "README.md"]
HEAVY = ("duckdb", "pandas", "numpy", "pyarrow", "scipy", "rich")


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(REPO), LITELLM_LOCAL_MODEL_COST_MAP="True", COLUMNS="200")


def _python(code: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=timeout
    )


def _columns(table: str) -> list[str]:
    """A public table's columns, in order, from the schema itself."""
    with duckdb.connect() as con:
        con.execute(TABLES)
        return [row[0] for row in con.execute(f"DESCRIBE {table}").fetchall()]


def _rows(table) -> list[dict]:
    """A DataFrame's or an Arrow table's rows as dicts (missing values as None)."""
    if hasattr(table, "to_pylist"):
        return table.to_pylist()
    return json.loads(table.to_json(orient="records", date_format="iso"))


# ----- import and exports ------------------------------------------------------------------------------------


def test_import_clade_starts_nothing_heavy(tmp_path):
    done = _python(f"import clade, sys; print([m for m in {HEAVY!r} if m in sys.modules])", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    assert not any(tmp_path.iterdir())  # and wrote nothing


def test_every_export_is_the_object_its_module_defines():
    from importlib import import_module

    for name, module in clade._EXPORTS.items():
        assert getattr(clade, name) is getattr(import_module(module), name)
        assert name in dir(clade)
    with pytest.raises(AttributeError):
        _ = clade.no_such_name


# ----- a run to read: one small search, shared by the tests that read it --------------------------------------


@pytest.fixture(scope="module")
def small_run(tmp_path_factory) -> clade.Run:
    """A finished search on four small dev instances, from a RunConfig with keyword settings over it."""
    folder = tmp_path_factory.mktemp("api")
    instances = small_instances(folder / "instances.json")
    config = clade.RunConfig.of(instances=str(instances), sandbox="process", budget=30, seed=3)
    return clade.search(config, budget=14, workers=2, run_dir=str(folder / "runs"), quiet=True)


@pytest.mark.slow
def test_settings_go_over_the_config_and_the_run_is_stored(small_run):
    assert small_run.path.parent.name == "runs" and small_run.path.is_absolute()
    assert small_run.id == small_run.path.name
    assert (small_run.config.search.budget, small_run.config.search.seed) == (14, 3)  # budget=14 over 30
    assert small_run.config.evaluation.sandbox == "process"
    assert small_run.status == "finished"
    dev = [r for r in _rows(small_run.evaluations()) if r["split"] == "dev"]
    assert len(dev) == 14  # the budget, spent


def test_tables_have_the_schemas_columns(small_run):
    import pandas as pd

    for name, table in (
        ("nodes", small_run.nodes()),
        ("evaluations", small_run.evaluations()),
        ("llm_calls", small_run.llm_calls()),
        ("events", small_run.table("events")),
    ):
        assert isinstance(table, pd.DataFrame)
        assert list(table.columns) == _columns(name)
    nodes = _rows(small_run.nodes())
    assert [n["id"] for n in nodes] == list(range(len(nodes)))  # every node, in id order
    assert len(_rows(small_run.llm_calls())) == 0  # the offline mutator calls no model
    with pytest.raises(clade.UserError, match="not a table"):
        small_run.table("blobs; DROP TABLE nodes")


def test_best_is_the_final_node_with_its_own_figures(small_run):
    best = small_run.best()
    finals = [e for e in _rows(small_run.table("events")) if e["kind"] == "select_final"]
    assert finals and best.id == finals[-1]["node_id"]
    evaluations = [e for e in _rows(small_run.evaluations()) if e["node_id"] == best.id]
    dev = [e["score"] for e in evaluations if e["split"] == "dev"]
    holdout = [e["score"] for e in evaluations if e["split"] == "holdout"]
    assert best.dev_evaluations == len(dev) and best.dev_mean == pytest.approx(sum(dev) / len(dev))
    assert holdout and best.holdout_mean == pytest.approx(sum(holdout) / len(holdout))  # the final is measured
    files = {r["path"] for r in _rows(small_run.table("node_files")) if r["node_id"] == best.id}
    assert set(best.files) == files == {"agent.py"}
    assert best.code == best.files["agent.py"] and "def priority" in best.code
    assert "agent.py" not in repr(best)  # a node prints as its figures, not its code
    assert len({best, small_run.best()}) == 1  # frozen and hashable: equal nodes are one


@pytest.mark.slow
def test_best_without_a_final_choice_is_the_best_mean_on_the_most_evaluations(small_run, tmp_path):
    """A run stopped before its end: its archive copied, the final choice taken out."""
    copy = tmp_path / small_run.id
    shutil.copytree(small_run.path, copy)
    with duckdb.connect(str(copy / "archive.duckdb")) as con:
        con.execute("DELETE FROM events WHERE kind = 'select_final'")
        n_dev = con.execute("SELECT count(*) FROM instances WHERE split = 'dev'").fetchone()[0]
    stopped = clade.open_run(copy)
    dev: dict[int, list[float]] = {}
    for e in _rows(stopped.evaluations()):
        if e["split"] == "dev":
            dev.setdefault(e["node_id"], []).append(e["score"])
    floor = min(max(len(s) for s in dev.values()), n_dev)
    expected = max(sorted(n for n in dev if len(dev[n]) >= floor), key=lambda n: sum(dev[n]) / len(dev[n]))
    assert stopped.best().id == expected
    with duckdb.connect(str(copy / "archive.duckdb")) as con:  # only the seed measured: the seed
        con.execute("DELETE FROM evaluations WHERE node_id > 0")
    assert stopped.best().id == 0


def test_lineage_goes_from_the_root_to_the_node(small_run):
    parents = {n["id"]: n["parent_id"] for n in _rows(small_run.nodes())}
    deepest = max(parents, key=lambda n: (len(small_run.lineage(n)), n))
    path = small_run.lineage(deepest)
    assert len(path) >= 2, "the search made no child of a child"
    assert path[0].id == 0 and path[0].parent_id is None and path[-1].id == deepest
    for parent, child in zip(path, path[1:]):
        assert parents[child.id] == parent.id == child.parent_id
    assert [n.id for n in small_run.lineage(path[-1])] == [n.id for n in path]  # a Node works as the id does
    with pytest.raises(clade.UserError, match=f"no node {len(parents) + 5}"):
        small_run.lineage(len(parents) + 5)


def test_plot_lineage_draws_what_the_command_draws_and_never_replaces_a_users_file(small_run, tmp_path):
    pytest.importorskip("matplotlib", reason="the viz extra is not installed")
    png = small_run.plot_lineage(tmp_path / "plots")
    assert png == tmp_path / "plots" / "lineage.png" and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "plots" / "lineage.svg").read_text().count('class="clade-node"') == len(_rows(small_run.nodes()))
    assert small_run.plot_lineage(tmp_path / "plots") == png  # its own plot is redrawn
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "lineage.svg").write_text("my drawing")
    with pytest.raises(clade.UserError, match="is not a plot this script wrote"):
        small_run.plot_lineage(mine)
    assert (mine / "lineage.svg").read_text() == "my drawing" and not (mine / "lineage.png").exists()


def test_a_closed_run_says_so(small_run):
    with clade.open_run(small_run.path / "archive.duckdb") as again:
        assert again.path == small_run.path and again.id == small_run.id
    with pytest.raises(clade.UserError, match="closed"):
        again.nodes()


# ----- errors: one line, a UserError ------------------------------------------------------------------------


def test_open_run_refuses_what_is_not_a_run(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("not an archive\n" * 10)
    other = tmp_path / "other.duckdb"
    with duckdb.connect(str(other)) as con:
        con.execute("CREATE TABLE t (x INTEGER)")
    (tmp_path / "empty").mkdir()
    cases = {
        tmp_path / "missing": "does not exist",
        text: "not a DuckDB file",
        tmp_path / "empty": "no archive.duckdb there",
        other: "not a Clade archive",
    }
    for path, said in cases.items():
        with pytest.raises(clade.UserError) as caught:
            clade.open_run(path)
        assert said in str(caught.value) and "\n" not in str(caught.value)
    assert other.read_bytes()[8:12] == b"DUCK"  # nothing the user made was touched


def test_a_bad_setting_raises_the_line_the_command_prints(tmp_path):
    with pytest.raises(clade.UserError) as caught:
        clade.search(budget=-3, run_dir=str(tmp_path / "runs"))
    command = subprocess.run(
        [sys.executable, "-m", "clade", "search", "--budget", "-3", "--run-dir", str(tmp_path / "runs")],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
    )
    assert command.returncode == 2 and command.stderr == f"error: {caught.value}\n"
    assert not (tmp_path / "runs").exists()
    with pytest.raises(clade.UserError, match="no setting 'budgte' .did you mean budget"):
        clade.search(budgte=3)
    with pytest.raises(clade.UserError, match="RunConfig, a run file's path or None"):
        clade.search({"budget": 3})


@pytest.mark.slow
def test_a_run_file_is_a_config_and_its_errors_name_the_key(tmp_path):
    """`clade.search("run.toml")` reads the file `clade search --config` reads (keyword settings over it),
    and a bad value is the command's one line, naming the file and the key; no run is made."""
    instances = small_instances(tmp_path / "instances.json")
    written = subprocess.run(
        [sys.executable, "-m", "clade", "search", "--print-config", "--budget", "6", "--sandbox", "process"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (tmp_path / "run.toml").write_text(written)
    run = clade.search(tmp_path / "run.toml", instances=str(instances), run_dir=str(tmp_path / "runs"), quiet=True)
    assert (run.config.search.budget, run.config.evaluation.sandbox) == (6, "process")
    assert len([e for e in _rows(run.evaluations()) if e["split"] == "dev"]) == 6
    (tmp_path / "bad.toml").write_text('[search]\nbudget = "x"\n')
    with pytest.raises(clade.UserError, match=r"bad.toml: \[search\] budget must be a whole number"):
        clade.search(str(tmp_path / "bad.toml"), run_dir=str(tmp_path / "bad-runs"))
    (tmp_path / "zero.toml").write_text("[search]\nbudget = 0\n")
    with pytest.raises(clade.UserError, match=r"zero.toml: \[search\] budget = 0"):
        clade.search(str(tmp_path / "zero.toml"), run_dir=str(tmp_path / "bad-runs"))
    assert not (tmp_path / "bad-runs").exists()


# ----- as a user types it ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_one_liner(tmp_path):
    code = "import clade; r = clade.search(budget=20, quiet=True); print(r.nodes().shape, r.best())"
    done = _python(code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # quiet: nothing but what the user printed
    (line,) = done.stdout.splitlines()
    shape = re.match(r"\((\d+), (\d+)\) Node\(id=(\d+), parent_id=", line)
    assert shape, line
    (run,) = (tmp_path / "runs").iterdir()
    with duckdb.connect(str(run / "archive.duckdb"), read_only=True) as con:
        n_nodes = con.execute("SELECT count(*) FROM nodes").fetchone()[0]
    assert (int(shape[1]), int(shape[2])) == (n_nodes, len(_columns("nodes")))
    assert int(shape[3]) < n_nodes


CHECKS = """
import json as _json, clade as _clade
_found = {}
for _name, _value in list(globals().items()):
    if isinstance(_value, _clade.Run):
        _nodes, _best = _value.nodes(), _value.best()
        _found[_name] = {
            "kind": type(_nodes).__module__.split(".")[0] + "." + type(_nodes).__name__,
            "columns": _nodes.column_names if hasattr(_nodes, "column_names") else list(_nodes.columns),
            "rows": len(_nodes),
            "status": _value.status,
            "best_is_node": isinstance(_best, _clade.Node),
            "lineage_ends_at_best": [n.id for n in _value.lineage(_best)][-1] == _best.id,
            "lineage_starts_at_a_root": _value.lineage(_best)[0].parent_id is None,
        }
print("CHECKS " + _json.dumps(_found))
"""

PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
# the runs the pages made, opened again where pandas cannot be imported: the same reads give Arrow tables
REOPENED_WITHOUT_PANDAS = (
    "import sys\nsys.modules['pandas'] = None\nimport pathlib, clade\n"
    "for _i, _path in enumerate(sorted(pathlib.Path('runs').iterdir())):\n"
    "    globals()[f'run_{_i}'] = clade.open_run(_path)\n"
)


def _checked(done: subprocess.CompletedProcess, kind: str) -> dict:
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.split("CHECKS ", 1)[1])
    for name, seen in found.items():
        assert seen["kind"] == kind, name
        assert seen["columns"] == _columns("nodes") and seen["rows"] >= 1
        assert seen["status"] == "finished"
        assert seen["best_is_node"] and seen["lineage_ends_at_best"] and seen["lineage_starts_at_a_root"]
    return found


@pytest.mark.slow
def test_every_python_block_of_the_pages_runs_as_written(tmp_path):
    """Every top-level ```python block of the pages, in order, in one process (as a notebook's cells), with
    the pandas extra: tables are DataFrames. Then the runs they made, opened again in a process where pandas
    cannot be imported: the same calls give Arrow tables (a base install's). An indented block belongs to a
    list item's prose (agent-side code that runs only inside a sandbox that serves a model)."""
    blocks = [b for page in PAGES if page.exists() for b in PYTHON_BLOCK.findall(page.read_text())]
    assert len(blocks) >= 4  # the guide's own: a search, its nodes, another run opened, a task of one's own
    (tmp_path / "page.py").write_text("\n".join(blocks) + CHECKS)
    found = _checked(_python("import runpy; runpy.run_path('page.py')", tmp_path, timeout=300), "pandas.DataFrame")
    assert {"run", "again", "mine"} <= set(found)
    searches = sum(len(re.findall(r"^\w+ = clade\.search\(", b, re.M)) for b in blocks)
    assert searches >= 2 and len(list((tmp_path / "runs").iterdir())) == searches  # each, in the user's folder
    (tmp_path / "reopened.py").write_text(REOPENED_WITHOUT_PANDAS + CHECKS)
    reopened = _checked(_python("import runpy; runpy.run_path('reopened.py')", tmp_path), "pyarrow.Table")
    assert len(reopened) == searches


# a notebook's cell runs inside an event loop (ipykernel's), where asyncio.run refuses to start: as here
IN_A_LOOP = """
import asyncio
async def cell():
    return {call}
loop = asyncio.new_event_loop()  # run_until_complete takes no SIGINT of its own: Ctrl-C raises, as in Jupyter
run = loop.run_until_complete(cell())
"""


def test_a_search_runs_where_an_event_loop_runs(tmp_path):
    instances = small_instances(tmp_path / "instances.json")

    async def cell() -> clade.Run:
        return clade.search(instances=str(instances), sandbox="process", budget=6, run_dir=str(tmp_path), quiet=True)

    run = asyncio.run(cell())
    assert run.status == "finished" and run.path.parent == tmp_path
    assert len([e for e in _rows(run.evaluations()) if e["split"] == "dev"]) == 6


@pytest.mark.slow
@pytest.mark.parametrize("where", ["script", "event-loop"])
def test_ctrl_c_stores_the_run_as_interrupted_and_raises(tmp_path, where):
    instances = small_instances(tmp_path / "instances.json", n_dev=8, n_items=400)
    call = f"clade.search(budget=500, workers=1, instances={str(instances)!r}, live_interval=0.3, quiet=True)"
    search = IN_A_LOOP.format(call=call) if where == "event-loop" else call
    code = "import clade\ntry:\n" + textwrap.indent(search.strip(), "    ")
    code += "\nexcept KeyboardInterrupt as exc:\n    print('KeyboardInterrupt:', exc)\n"
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    child = subprocess.Popen([sys.executable, "-c", code], cwd=tmp_path, env=_env(), text=True, **pipes)
    try:
        read_live = _wait_for_a_child(tmp_path / "runs", deadline=time.monotonic() + 60)
        assert read_live.startswith("running (live, as of"), read_live  # read while the search runs
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 0, err
    assert out.startswith("KeyboardInterrupt: the search was interrupted;"), out + err
    (run,) = (tmp_path / "runs").iterdir()
    assert str(run) in out  # where it is, to resume it
    assert clade.open_run(run).status == "interrupted"


def _wait_for_a_child(runs: Path, deadline: float) -> str:
    """The status a reader sees once the running search has a node beyond the seed (its live copy)."""
    while time.monotonic() < deadline:
        for folder in runs.glob("*") if runs.exists() else ():
            try:
                run = clade.open_run(folder)
                if len(run.nodes()) >= 2:
                    return run.status
            except clade.UserError:  # no live copy yet
                pass
        time.sleep(0.2)
    raise AssertionError("the search made no child within a minute")
