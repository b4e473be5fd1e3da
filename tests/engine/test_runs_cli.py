"""`python -m engine.runs`: list, show, best, compare over archives, and one-line errors."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from engine.runinfo.cli import main
from tests.conftest import REPO
from tests.engine.plots.run_fixture import shared_small_run, shared_synthetic_run


@pytest.fixture(scope="module")
def real_run(tmp_path_factory) -> Path:
    return shared_small_run(tmp_path_factory)


@pytest.fixture(scope="module")
def fake_run(tmp_path_factory) -> Path:
    return shared_synthetic_run(tmp_path_factory, 60)


def runs_cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="200")
    return subprocess.run(
        [sys.executable, "-m", "engine.runs", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _sql(run: Path, query: str):
    with duckdb.connect(str(run / "archive.duckdb"), read_only=True) as con:
        return con.execute(query).fetchall()


def _final(run: Path) -> int:
    return _sql(run, "SELECT node_id FROM events WHERE kind = 'select_final'")[0][0]


def test_list_shows_every_run_and_says_which_cannot_be_read(real_run, fake_run, tmp_path):
    runs = tmp_path / "runs"
    shutil.copytree(real_run, runs / real_run.name)
    shutil.copytree(fake_run, runs / "synthetic-run")
    shutil.copytree(real_run, runs / "busy")
    (runs / "broken").mkdir()
    (runs / "broken" / "archive.duckdb").write_text("not a database")
    (runs / "not-a-run").mkdir()
    holder = duckdb.connect(str(runs / "busy" / "archive.duckdb"))  # as a running search holds it
    try:
        out = runs_cli("list", str(runs))
    finally:
        holder.close()
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert real_run.name in text and "synthetic-60-s3" in text
    assert "in use by a running search" in text and "not a DuckDB file" in text
    assert "not-a-run" not in text
    line = next(row for row in text.splitlines() if real_run.name in row)
    for cell in ("binpack", "hgm", "finished", "40", f"#{_final(real_run)}"):
        assert cell in line
    holdout = _sql(
        real_run, f"SELECT avg(score) FROM evaluations WHERE split = 'holdout' AND node_id = {_final(real_run)}"
    )[0][0]
    assert f"{holdout:.3f}" in line


def test_list_defaults_to_the_run_dir_and_accepts_one_run(real_run, capsys):
    assert main(["--run-dir", str(real_run.parent), "list"]) == 0
    assert real_run.name in capsys.readouterr().out
    assert main(["list", str(real_run)]) == 0
    assert real_run.name in capsys.readouterr().out


def test_show_prints_config_counts_spend_and_final_node(real_run, fake_run, capsys):
    assert main(["show", str(real_run)]) == 0
    text = capsys.readouterr().out
    nodes = _sql(real_run, "SELECT count(*) FROM nodes")[0][0]
    assert f"{nodes}: " in text and "40 of budget 40" in text and "no model calls" in text
    assert f"#{_final(real_run)}: dev " in text and "0.1-quantile" in text
    assert "policy" in text and "sandbox" in text and "process" in text  # the config
    assert main(["--run-dir", str(fake_run.parent), "show", fake_run.name]) == 0  # a run id under --run-dir
    text = capsys.readouterr().out
    dollars = _sql(fake_run, "SELECT sum(cost_usd) FROM llm_calls")[0][0]
    assert f"${dollars:.4f}" in text and "invalid" in text and "failed" in text


def test_best_prints_the_final_node_and_its_code(real_run, capsys):
    final = _final(real_run)
    (code,) = _sql(
        real_run, f"SELECT b.content FROM node_files f JOIN blobs b ON b.hash = f.hash WHERE f.node_id = {final}"
    )[0]
    assert main(["best", str(real_run)]) == 0
    text = capsys.readouterr().out
    assert f"#{final}, final node" in text and "agent.py" in text
    assert code.strip().splitlines()[-1] in text
    assert main(["best", str(real_run), "--code-only"]) == 0
    assert capsys.readouterr().out == code


def test_compare_puts_runs_side_by_side_and_flags_what_differs(real_run, fake_run, capsys):
    assert main(["compare", str(real_run), str(fake_run)]) == 0
    text = capsys.readouterr().out
    assert real_run.name in text and "synthetic-60-s3" in text
    assert "mutator (differs)" in text and "final holdout mean" in text
    row = next(line for line in text.splitlines() if line.startswith("│ final node "))
    assert f"#{_final(real_run)}" in row and f"#{_final(fake_run)}" in row


@pytest.mark.parametrize(
    "args, message",
    [
        (["show", "/no/such/run"], "no run '/no/such/run'"),
        (["best", "README.md"], "not an archive"),
        (["show", "."], "not an archive (no archive.duckdb there)"),
        (["compare", "README.md"], "compare needs two runs or more"),
        (["list", "/no/such/folder"], "not a folder of runs"),
        (["frobnicate"], "unknown command 'frobnicate'"),
        ([], "required"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(args, message):
    out = runs_cli(*args)
    assert out.returncode == 2
    assert out.stderr.startswith("error: ") and out.stderr.count("\n") == 1, out.stderr
    assert message in out.stderr and "Traceback" not in out.stderr


def test_help_imports_nothing_heavy():
    code = (
        "import sys\nfrom engine.runinfo.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n"
        "    pass\nprint(sorted(m for m in ('rich', 'duckdb', 'matplotlib', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
    )
    assert out.stdout.strip().splitlines()[-1] == "[]"


# ----- a run that did not finish: its status as shown, and the command that resumes it ---------------


def _evaluations_so_far(run: Path, scratch: Path) -> int:
    """Dev evaluations in the archive of a live search, read from a copy (the search holds the file);
    0 while there is nothing to read or the copy caught a write half done."""
    scratch.mkdir(exist_ok=True)
    for name in ("archive.duckdb", "archive.duckdb.wal"):
        (scratch / name).unlink(missing_ok=True)
        if (run / name).exists():
            shutil.copy(run / name, scratch / name)
    try:
        return _sql(scratch, "SELECT count(*) FROM evaluations WHERE split = 'dev'")[0][0]
    except (duckdb.Error, OSError):
        return 0


@pytest.mark.slow
def test_a_run_killed_with_kill_9_is_shown_stopped_with_its_resume_command(tmp_path):
    runs = tmp_path / "runs"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(
        [sys.executable, "-m", "engine.search", "--budget", "200", "--run-dir", str(runs), "--quiet"],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            found = list(runs.glob("*/archive.duckdb")) if runs.is_dir() else []
            if found and _evaluations_so_far(found[0].parent, tmp_path / "copy") >= 4:
                break
            time.sleep(0.2)
        assert proc.poll() is None, "the search ended before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)  # no cleanup: the archive keeps status 'running'
    finally:
        proc.kill()
        proc.wait()
    (run,) = list(runs.iterdir())
    assert _sql(run, "SELECT status FROM runs")[0][0] == "running"
    assert 4 <= _sql(run, "SELECT count(*) FROM evaluations WHERE split = 'dev'")[0][0] < 200
    resume = f"clade search --resume {run}"
    listed = runs_cli("list", str(runs))
    assert listed.returncode == 0, listed.stderr
    line = next(row for row in listed.stdout.splitlines() if run.name in row)
    assert "stopped (killed?)" in line and " running " not in line
    assert resume in listed.stdout
    shown = runs_cli("show", str(run))
    assert shown.returncode == 0, shown.stderr
    status = next(row for row in shown.stdout.splitlines() if row.startswith("│ status "))
    assert "stopped (killed?)" in status and "running" not in status
    assert f"Resume: {resume}" in shown.stdout


def test_show_prints_the_resume_command_of_any_unfinished_run(real_run, tmp_path, capsys):
    assert main(["show", str(real_run)]) == 0
    assert "--resume" not in capsys.readouterr().out  # finished: nothing to resume
    for status in ("interrupted", "time_limit"):  # Ctrl-C'd, and a status this code does not know
        run = tmp_path / status
        shutil.copytree(real_run, run)
        with duckdb.connect(str(run / "archive.duckdb")) as con:
            con.execute("UPDATE runs SET status = ?", [status])
        assert main(["show", str(run)]) == 0
        text = capsys.readouterr().out
        row = next(line for line in text.splitlines() if line.startswith("│ status "))
        assert status in row
        assert f"Resume: clade search --resume {run}" in text
    assert main(["compare", str(real_run), str(tmp_path / "interrupted")]) == 0
    text = capsys.readouterr().out
    assert f"Resume {real_run.name}: clade search --resume {tmp_path / 'interrupted'}" in text
    assert f"--resume {real_run}" not in text  # finished


# ----- a node's trajectories: its agents' steps on each instance, and its parent's steps that made it -----

SCRIPT = "<script>alert(1)</script>"


def trajectory_run(folder: Path, drop_table: bool = False) -> Path:
    """A small run folder whose node 1 was made by its parent's agent (3 expansion steps) and whose
    evaluations carry the agent's steps (one with 60 steps, one with an action holding a script tag);
    `drop_table`: as an archive made before the table existed."""
    from archive.records import EvaluationRecord, NodeRecord
    from archive.store import Archive

    run = folder / "traj-run"
    with Archive.create(
        run / "archive.duckdb", "traj-run", {"task": "repofix", "policy": "hgm", "budget": 4}, seed=1
    ) as archive:
        archive.add_instances([("inst-a", "dev", {}), ("inst-b", "dev", {})])
        archive.add_node(
            NodeRecord(0, None, 0, "valid", "seed", description="the seed agent"), {"agent.py": "print(0)\n"}
        )
        archive.add_node(
            NodeRecord(
                1,
                0,
                1,
                "valid",
                "self",
                description="reads files before editing",
                note=f"**Summary**: it edits blind\n\n**Proposed improvement**: view first {SCRIPT}",
            ),
            {"agent.py": "print(1)\n"},
            steps=[
                {
                    "tool": "view",
                    "action": "path=agent.py",
                    "result": "print(0)",
                    "tokens_in": 900,
                    "tokens_out": 30,
                    "time_s": 1.5,
                },
                {
                    "tool": "edit",
                    "action": "path=agent.py new=print(1)",
                    "result": "edited agent.py",
                    "tokens_in": 1000,
                    "tokens_out": 80,
                    "time_s": 2.0,
                },
                {"tool": "finish", "action": "", "result": "done"},
            ],
        )
        archive.add_evaluation(EvaluationRecord(0, "inst-a", "dev", 0, 0.0, status="error"))
        archive.add_evaluation(
            EvaluationRecord(1, "inst-a", "dev", 0, 1.0, status="ok"),
            steps=[
                {
                    "tool": "bash",
                    "action": f"echo '{SCRIPT}'",
                    "result": "x" * 1000 + "\x1b[31mred",
                    "tokens_in": 120,
                    "tokens_out": 40,
                    "time_s": 0.8,
                },
                {
                    "tool": "edit",
                    "action": "path=pkg/x.py\nold=a\nnew=b",
                    "result": "edited pkg/x.py",
                    "tokens_in": 130,
                    "tokens_out": 45,
                    "time_s": 0.25,
                },
            ],
        )
        archive.add_evaluation(
            EvaluationRecord(1, "inst-b", "dev", 0, 0.5, status="timeout"),
            steps=[
                {
                    "tool": "bash",
                    "action": f"run {i}",
                    "result": f"out {i}",
                    "tokens_in": i,
                    "tokens_out": 1,
                    "time_s": 0.1,
                }
                for i in range(60)
            ],
        )
        archive.set_status("finished")
    if drop_table:
        with duckdb.connect(str(run / "archive.duckdb")) as con:
            con.execute("DROP TABLE trajectory_steps")
            con.execute("ALTER TABLE nodes DROP COLUMN note")
    return run


def test_show_node_prints_its_agents_steps_and_the_steps_that_made_it(tmp_path, capsys):
    run = trajectory_run(tmp_path)
    assert main(["show", str(run), "--node", "1"]) == 0
    text = capsys.readouterr().out
    assert "Node #1 of traj-run" in text and "reads files before editing" in text and "#0" in text
    lines = text.splitlines()
    head = lines.index("dev inst-a: ok, score 1.000, 2 steps")
    assert lines[head + 1].startswith(f"   0 bash    echo '{SCRIPT}' -> xxx")
    assert lines[head + 1].endswith("(120+40 tok, 0.8 s)") and "\x1b" not in text
    assert lines[head + 2] == "   1 edit    path=pkg/x.py old=a new=b -> edited pkg/x.py  (130+45 tok, 0.2 s)"
    assert "dev inst-b: timeout, score 0.500, 60 steps" in text
    assert "run 49 -> out 49" in text and "run 50 " not in text
    assert "10 more steps not shown" in text
    made = next(i for i, line in enumerate(lines) if line.startswith("made by its parent's steps:"))
    assert made > head and "3 steps" in lines[made]
    assert lines[made + 2] == "   1 edit    path=agent.py new=print(1) -> edited agent.py  (1000+80 tok, 2.0 s)"
    assert lines[made + 3].startswith("   2 finish  - -> done")
    note = lines.index("improvement note (the review that planned this node's change):")
    assert note < head and lines[note + 1] == "  **Summary**: it edits blind"
    # the seed: no steps of its own, nothing that made it
    assert main(["show", str(run), "--node", "0"]) == 0
    assert "No agent steps recorded for this node." in capsys.readouterr().out
    # the run's own show is unchanged
    assert main(["show", str(run)]) == 0
    assert "Run traj-run" in capsys.readouterr().out


def test_show_node_of_an_archive_older_than_trajectories(tmp_path, capsys):
    run = trajectory_run(tmp_path, drop_table=True)
    assert main(["show", str(run), "--node", "1"]) == 0
    text = capsys.readouterr().out
    assert "Node #1 of traj-run" in text and "No agent steps recorded for this node." in text
    assert "improvement note" not in text


@pytest.mark.parametrize("node, message", [("7", "has no node 7 (its nodes are 0 to 1)"), ("x", "not a node id")])
def test_show_a_node_that_is_not_there_is_one_line(tmp_path, node, message):
    run = trajectory_run(tmp_path)
    out = runs_cli("show", str(run), "--node", node)
    assert out.returncode == 2
    assert out.stderr.startswith("error: ") and out.stderr.count("\n") == 1 and message in out.stderr, out.stderr
