"""An evaluation whose evaluator caught the candidate's failure is `failed_in_evaluator`: stored so, scored 0,
a miss for the operators that made the child, a seed that fails so stops the run, and every count of failures
(the end-of-run summary, `runs show`) includes it."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from types import SimpleNamespace

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from engine.front.cli import build_parser
from engine.front.run import run_from_args
from engine.loop.credit import OperatorCredit
from engine.loop.evaluation import Outcome, run_agent
from engine.loop.scheduler import Launch, Scheduler
from engine.mutators.offline import NAMES
from engine.runinfo.cli import main as runs_main
from engine.sandbox.process import ProcessSandbox
from search.tree import TreeStats
from tasks import make_task
from tests.engine.test_search_e2e import only_run, read

PROGRAM = '''"""A sum of two constants; the evaluator fails it on an even thousandth."""

# EVOLVE-BLOCK-START
def value():
    x = 0.501
    y = 0.25
    return x + y
# EVOLVE-BLOCK-END


def run():
    return value()
'''
EVALUATOR = """import importlib.util


def evaluate(program_path):
    try:
        spec = importlib.util.spec_from_file_location("program", program_path)
        program = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(program)
        v = float(program.run())
        return {"combined_score": min(1.0, v / (round(v * 1000) % 2))}  # an even thousandth divides by zero
    except Exception as exc:
        return {"combined_score": 0.0, "error": f"{type(exc).__name__}: {exc}"}
"""


def openevolve_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "parity"
    folder.mkdir()
    (folder / "initial_program.py").write_text(PROGRAM)
    (folder / "evaluator.py").write_text(EVALUATOR)
    return folder


def test_a_caught_error_is_stored_failed_in_evaluator_with_the_evaluators_figures(tmp_path):
    task = make_task(str(openevolve_folder(tmp_path)))
    instance = task.instances()[0]
    seed = asyncio.run(run_agent(task, ProcessSandbox(), task.seed_files(), instance))
    assert seed.status == "ok" and abs(seed.metrics["metric"] - 0.751) < 1e-9
    even = task.seed_files()["initial_program.py"].replace("x = 0.501", "x = 0.5")
    out = asyncio.run(run_agent(task, ProcessSandbox(), {"initial_program.py": even}, instance))
    assert out.status == "failed_in_evaluator"
    assert out.feedback.startswith("the evaluator caught a failure: ZeroDivisionError: float division by zero")
    assert out.feedback.count("ZeroDivisionError") == 1  # said once, not again as the metrics' error
    assert out.metrics == {"failed_metric": 0.0, "evaluator": {"combined_score": 0.0}}  # kept, never as `metric`


def test_a_child_failed_in_its_evaluator_scores_zero_and_is_a_miss_for_its_operators():
    caught = Outcome("failed_in_evaluator", {"failed_metric": 0.9, "evaluator": {"combined_score": 0.9}}, "boom")
    score = Scheduler._task_score(SimpleNamespace(), Launch(1, 0, 0, {}), caught)  # type: ignore[arg-type]
    assert score == 0.0  # never the task's score of the figures it kept
    tree, credit = TreeStats(1), OperatorCredit()
    tree.add_node(None, True)
    tree.start_evaluation(0, 0)
    tree.finish_evaluation(0, 0, 0.0)  # a parent at 0: even a tie would not be a hit
    operator = sorted(NAMES)[0]
    tree.add_node(0, True)
    credit.child_stored(1, 0, f"{operator} something", valid=True)
    tree.start_evaluation(1, 0)
    to_beat = credit.before_evaluation(tree, 1)
    tree.finish_evaluation(1, 0, score)
    credit.evaluated(1, score, to_beat)
    assert credit.as_mapping() == {operator: (0.0, 1.0)}


def test_a_seed_that_fails_in_its_evaluator_everywhere_stops_the_run_quoting_the_error():
    fake = SimpleNamespace(
        _seed_done=0,
        _seed_failures=[],
        seed_screen=1,
        state=SimpleNamespace(tree=SimpleNamespace(n_instances=1)),
        resumable=True,
        fatal=None,
    )
    fake._seed_verdict = lambda: Scheduler._seed_verdict(fake)  # type: ignore[arg-type]
    outcome = Outcome("failed_in_evaluator", {}, "the evaluator caught a failure: KeyError: 'data'")
    verdict = Scheduler._seed_evaluated(fake, "task", outcome)  # type: ignore[arg-type]
    assert verdict == fake.fatal and not fake.resumable and "\n" not in verdict
    assert verdict.endswith("on task: failed_in_evaluator: the evaluator caught a failure: KeyError: 'data'")


def test_a_search_counts_the_caught_failures_in_its_summary_and_runs_show(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # one line per table row
    folder = openevolve_folder(tmp_path)
    runs = tmp_path / "runs"
    argv = ["--task", str(folder), "--budget", "8", "--workers", "1", "--sandbox", "process", "--seed", "0"]
    assert run_from_args(build_parser().parse_args([*argv, "--run-dir", str(runs)])) == 0
    printed = capsys.readouterr().out
    run = only_run(runs)
    caught = read(run, "SELECT count(*) FROM evaluations WHERE split = 'dev' AND status = 'failed_in_evaluator'")[0][0]
    failed = read(run, "SELECT count(*) FROM evaluations WHERE split = 'dev' AND status <> 'ok'")[0][0]
    assert caught >= 1, printed  # the offline mutator's numeric steps land on an even thousandth now and then
    assert read(run, "SELECT max(score) FROM evaluations WHERE status = 'failed_in_evaluator'")[0][0] == 0.0
    assert f"{caught} failed_in_evaluator" in printed and f": {failed} failed (" in printed
    assert runs_main(["show", str(run)]) == 0
    shown = capsys.readouterr().out
    assert f"{caught} failed_in_evaluator" in shown and f"({failed} failed)" in shown
