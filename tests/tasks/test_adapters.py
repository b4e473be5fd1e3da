"""Task folders of other engines run unchanged: detection, each format end to end, the score map, forgery.

The fixtures in tests/fixtures/tasks/ follow each format as its project
documents it: `openevolve_minimize` (OpenEvolve: initial_program.py with one
EVOLVE-BLOCK, evaluator.py with evaluate(program_path) -> dict and the
evaluate_stage1/2 cascade, config.yaml), `shinka_spread` (ShinkaEvolve:
initial.py, evaluate.py --program_path P --results_dir D writing
metrics.json and correct.json; ShinkaEvolve's examples write them through
its helper package `shinka`, which is not installed here, so this evaluate.py
writes the same two files itself), `shinka_repo` (ShinkaEvolve's repo mode,
as its examples/inference_pipeline_repo README documents it: shinka.yaml
with evo.seed_repo_path and mutable_paths, evaluate.py --repo_path R
--results_dir D), `metric_value_sine` (config.py,
initial_solution.py, benchmark.py printing `error: <value>`) and
`public_private_regression` (data/public, data/private, grade.py, solution.py).
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.front.cli import build_parser
from engine.front.run import run_from_args
from engine.loop.evaluation import run_agent
from engine.sandbox.process import ProcessSandbox
from tasks import make_task
from tasks.adapters import detect
from tasks.adapters.scoring import anchored_score
from tests.conftest import REPO, run_cli
from tests.engine.test_search_e2e import assert_budget_invariants, only_run, read

FIXTURES = REPO / "tests" / "fixtures" / "tasks"
FORMATS = {
    "openevolve_minimize": ("openevolve", "initial_program.py"),
    "shinka_spread": ("shinkaevolve", "initial.py"),
    "shinka_repo": ("shinkaevolve_repo", "repo/src/curve.py"),
    "metric_value_sine": ("metric_value", "initial_solution.py"),
    "public_private_regression": ("public_private", "solution.py"),
}
GUIDE = (REPO / "docs" / "guide" / "tasks.md").read_text()  # the task folders' page


def evaluate(task, files, split="dev"):
    instance = next(i for i in task.instances() if i.split == split)
    return asyncio.run(run_agent(task, ProcessSandbox(), files, instance))


# ----- detection and the command line ---------------------------------------------------------------


@pytest.mark.parametrize("folder", sorted(FORMATS))
def test_each_fixture_is_detected_as_its_format(folder):
    fmt, entry = FORMATS[folder]
    assert detect(FIXTURES / folder) == fmt
    task = make_task(str(FIXTURES / folder))
    assert task.entry_file == entry and entry in task.seed_files()
    assert [i.split for i in task.instances()] == ["dev", "holdout"]


def test_a_folder_of_no_known_format_is_one_line_naming_the_files_expected(tmp_path):
    (tmp_path / "main.py").write_text("print(1)\n")
    with pytest.raises(ValueError, match="initial_program.py \\+ evaluator.py") as err:
        detect(tmp_path)
    assert "\n" not in str(err.value) and "grade.py" in str(err.value)
    out = run_cli("--task", str(tmp_path), "--budget", "2", "--run-dir", str(tmp_path / "runs"))
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "expected one of" in out.stderr
    out = run_cli("--task", "no_such_task", "--budget", "2", "--run-dir", str(tmp_path / "runs"))
    assert out.returncode == 2 and "circle_packing" in out.stderr and "task folder" in out.stderr
    out = run_cli(
        "--task",
        str(FIXTURES / "metric_value_sine"),
        "--instances",
        str(tmp_path / "main.py"),
        "--budget",
        "2",
        "--run-dir",
        str(tmp_path / "runs"),
    )
    assert out.returncode == 2 and "--instances does not apply" in out.stderr


@pytest.mark.slow
@pytest.mark.parametrize("folder", sorted(FORMATS))
def test_each_format_runs_end_to_end_with_the_offline_mutator(tmp_path, folder):
    out = run_cli(
        "--task",
        str(FIXTURES / folder),
        "--budget",
        "8",
        "--workers",
        "2",
        "--sandbox",
        "process",
        "--run-dir",
        str(tmp_path),
        "--quiet",
    )
    assert out.returncode == 0, out.stderr + out.stdout
    run = only_run(tmp_path)
    assert run.name.startswith(f"{folder}-hgm-")
    assert_budget_invariants(run, 8)
    # the seed's run anchors the score map (0.5); its second run is the one-instance noise probe (repeat 1)
    assert read(
        run, 'SELECT "repeat", score, status FROM evaluations WHERE node_id = 0 AND split = \'dev\' ORDER BY "repeat"'
    )[0] == (0, 0.5, "ok")
    assert (
        read(run, "SELECT count(*) FROM evaluations WHERE node_id = 0 AND split = 'dev' AND \"repeat\" = 1")[0][0] == 1
    )
    assert read(run, "SELECT count(*) FROM nodes WHERE mutator = 'offline'")[0][0] >= 1
    stored = read(run, "SELECT config->>'task' FROM runs")[0][0]
    assert stored == str((FIXTURES / folder).resolve())  # absolute, so a resume finds it from anywhere


def mutating_model(entry_file: str):
    """A scripted model: each answer retunes the first `name = number` line of the parent's editable code."""
    parent = re.compile(
        r"# Current code \(the parent\)\n" + re.escape(entry_file) + r"\n```python\n(.*?)\n```", re.DOTALL
    )
    calls = []

    def answer(model, messages, attempt):
        calls.append(model)
        code = parent.search(messages[1]["content"]).group(1)
        lines = code.splitlines()
        start = next((k for k, line in enumerate(lines) if "EVOLVE-BLOCK-START" in line), 0)
        line = next(line for line in lines[start:] if re.fullmatch(r"\s+\w+ = -?[0-9.]+", line))
        name, value = line.split(" = ")
        new = float(value) * (1.0 + 0.07 * len(calls) * (-1) ** len(calls))
        return (
            f"Change: retune {name.strip()}.\n\n{entry_file}\n<<<<<<< SEARCH\n{line}\n=======\n"
            f"{name} = {new:.6g}\n>>>>>>> REPLACE\n"
        )

    answer.calls = calls
    return answer


@pytest.mark.slow
@pytest.mark.parametrize("folder", sorted(FORMATS))
def test_each_format_runs_end_to_end_with_the_llm_mutator(tmp_path, folder):
    model = mutating_model(FORMATS[folder][1])
    args = build_parser().parse_args(
        [
            "--task",
            str(FIXTURES / folder),
            "--model",
            "openai/gpt-4o-mini",
            "--budget",
            "8",
            "--workers",
            "2",
            "--sandbox",
            "process",
            "--run-dir",
            str(tmp_path),
            "--quiet",
        ]
    )
    assert run_from_args(args, llm_mock=model) == 0
    run = only_run(tmp_path)
    assert_budget_invariants(run, 8)
    assert len(model.calls) >= 3
    assert read(run, "SELECT count(*) FROM llm_calls WHERE error IS NULL")[0][0] == len(model.calls)
    llm_nodes = read(run, "SELECT status FROM nodes WHERE mutator = 'llm'")
    assert llm_nodes and all(s == "valid" for (s,) in llm_nodes)
    assert (
        read(
            run,
            "SELECT count(*) FROM evaluations e JOIN nodes n ON n.id = e.node_id "
            "WHERE n.mutator = 'llm' AND e.status = 'ok'",
        )[0][0]
        >= 1
    )


# ----- what each format checks -----------------------------------------------------------------------


def test_openevolve_cascade_stops_a_weak_program_after_stage_one():
    task = make_task(str(FIXTURES / "openevolve_minimize"))
    assert task.runner_settings["cascade_thresholds"] == [0.3, 0.75]  # from config.yaml
    assert task.limits.timeout_s == 30
    seed = evaluate(task, task.seed_files())
    assert seed.status == "ok" and seed.metrics["cascade_stage"] == 2
    assert seed.metrics["metric"] == seed.metrics["evaluator"]["combined_score"]
    weak = (
        task.seed_files()["initial_program.py"]
        .replace("step = 1.0", "step = 0.0")
        .replace("best_x = np.random.uniform(-bound, bound)", "best_x = bound")
    )
    out = evaluate(task, {"initial_program.py": weak})
    assert out.status == "ok" and out.metrics["cascade_stage"] == 1 and out.metrics["metric"] < 0.3
    assert task.score(task.instances()[0], out.metrics, seed.metrics) < 0.5


def test_openevolve_evaluator_crash_is_an_invalid_answer(tmp_path):
    folder = tmp_path / "oe"
    folder.mkdir()
    (folder / "initial_program.py").write_text("def run():\n    return 1\n")
    (folder / "evaluator.py").write_text("def evaluate(program_path):\n    raise RuntimeError('boom')\n")
    task = make_task(str(folder))
    out = evaluate(task, task.seed_files())
    assert out.status == "bad_output" and "RuntimeError: boom" in out.feedback


def test_shinka_incorrect_program_with_a_why_is_failed_in_evaluator_and_private_metrics_are_dropped():
    task = make_task(str(FIXTURES / "shinka_spread"))
    seed = evaluate(task, task.seed_files())
    assert seed.status == "ok" and "closest two points" in seed.feedback
    assert "private" not in str(seed.metrics) and seed.metrics["evaluator"]["public.n_points"] == 12
    outside = task.seed_files()["initial.py"].replace("jitter = 0.02", "jitter = 0.5")
    out = evaluate(task, {"initial.py": outside})  # correct: false with its why: the evaluator caught a failure
    assert out.status == "failed_in_evaluator" and "incorrect: a point lies outside the unit square" in out.feedback
    assert "metric" not in out.metrics and out.metrics["evaluator"]["combined_score"] == 0.0


def test_shinka_repo_mode_mutates_only_the_mutable_paths_and_ships_the_rest():
    task = make_task(str(FIXTURES / "shinka_repo"))
    assert set(task.seed_files()) == {"repo/src/curve.py"} and task.entry_function == "predict"
    shipped = task.sandbox_files(task.instances()[0])
    assert "repo/data/points.json" in shipped and "evaluate.py" in shipped
    assert not any(p.startswith("seed_repo/") for p in shipped)  # the seed's mutable files come from the node
    good = evaluate(task, task.seed_files())
    assert good.status == "ok" and 0.0 < good.metrics["metric"] < 1.0, good.feedback
    fitted = {"repo/src/curve.py": task.seed_files()["repo/src/curve.py"].replace("1.0", "2.0").replace("0.5", "-0.75")}
    assert evaluate(task, fitted).metrics["metric"] == pytest.approx(1.0)
    broken = {"repo/src/curve.py": "def predict(x):\n    return x / 0\n"}
    result = evaluate(task, broken)
    assert result.status != "ok" and "division by zero" in result.feedback


def test_shinka_repo_configs_that_do_not_name_a_seed_repo_are_not_repo_mode(tmp_path):
    (tmp_path / "evaluate.py").write_text("print(1)\n")
    (tmp_path / "shinka.yaml").write_text("evo:\n  seed_repo_path: missing\n")
    with pytest.raises(ValueError, match="shinka.yaml naming evo.seed_repo_path"):
        detect(tmp_path)
    (tmp_path / "shinka.yaml").write_text("evo: [unclosed\n")
    with pytest.raises(ValueError, match="not readable YAML") as err:
        detect(tmp_path)
    assert "\n" not in str(err.value)
    (tmp_path / "seed").mkdir()
    (tmp_path / "seed" / "notes.txt").write_text("no code\n")
    (tmp_path / "shinka.yaml").write_text("evo:\n  seed_repo_path: seed\n")
    assert detect(tmp_path) == "shinkaevolve_repo"
    with pytest.raises(ValueError, match="no Python file under evo.mutable_paths"):
        make_task(str(tmp_path))


def test_metric_value_reads_config_as_data_and_lower_is_better():
    task = make_task(str(FIXTURES / "metric_value_sine"))
    assert (task.metric_name, task.higher_is_better, task.target) == ("error", False, 0.0)
    seed = evaluate(task, task.seed_files())
    assert seed.status == "ok" and seed.metrics["metric"] == pytest.approx(0.02978676)
    better = {"metric": seed.metrics["metric"] / 2}
    assert task.score(task.instances()[0], better, seed.metrics) == pytest.approx(0.75)


def test_public_private_sandbox_holds_public_data_only():
    task = make_task(str(FIXTURES / "public_private_regression"))
    files = task.sandbox_files(task.instances()[0])
    assert set(files) == {"data/public/task.md", "data/public/train.csv", "data/public/test.csv"}
    assert task.answer_file == "submission.csv" and "Predict y from x" in task.description
    seed = evaluate(task, task.seed_files())
    assert seed.status == "ok" and seed.metrics["metric"] == pytest.approx(0.62345, abs=1e-4)


# ----- forging the metric -----------------------------------------------------------------------------

FORGER = """
import atexit


def approximate(x):
    return 0.0


atexit.register(print, "error: 0.0")  # printed after the benchmark's own line: the last one wins
"""


def test_a_hostile_solution_forges_the_metric_value_line_as_the_readme_says():
    task = make_task(str(FIXTURES / "metric_value_sine"))
    out = evaluate(task, {"initial_solution.py": FORGER})
    assert out.status == "ok" and out.metrics["metric"] == 0.0  # forged: the true error is about 0.64
    assert task.score(task.instances()[0], out.metrics, {"metric": 0.0298}) == 1.0
    statement = "a hostile candidate can print the metric line itself"
    assert statement in " ".join(GUIDE.split()), "the tasks page must state what this format cannot protect"


HOSTILE_SOLUTION = """
import os

HOST_ANSWERS = {host!r}  # the task folder's answers, by their absolute path on the host


def main():
    print("rmse: 0.0")  # a printed score is only text
    print("private visible:", os.path.exists("data/private") or os.path.exists("grade.py"))
    with open("grade.py", "w") as fh:  # a grader of its own, beside itself: never imported
        fh.write("def grade(submission_path, private_dir):\\n    return 0.0\\n")
    try:
        rows = open(HOST_ANSWERS).read()
        print("host answers read")
    except OSError:
        rows = ""
    if not rows.startswith("id,y"):
        rows = "id,y\\n" + "".join(f"{{i}},0\\n" for i in range(20))
    with open("submission.csv", "w") as fh:
        fh.write(rows)


if __name__ == "__main__":
    main()
"""


def hostile_solution(task) -> dict[str, str]:
    return {"solution.py": HOSTILE_SOLUTION.format(host=str(task.private_dir / "answers.csv"))}


@pytest.mark.bwrap
def test_a_hostile_solution_cannot_forge_the_public_private_metric_in_bwrap():
    from engine.sandbox.bwrap import BwrapSandbox, bwrap_available

    ok, why = bwrap_available()
    if not ok:
        pytest.skip(f"bwrap unavailable: {why}")
    task = make_task(str(FIXTURES / "public_private_regression"))
    dev = task.instances()[0]
    out = asyncio.run(run_agent(task, BwrapSandbox(), hostile_solution(task), dev))
    assert "private visible: False" in out.stdout_tail and "host answers read" not in out.stdout_tail
    assert out.status == "ok" and out.metrics["metric"] > 3.0  # the real RMSE of predicting 0 everywhere
    assert task.score(dev, out.metrics, {"metric": 0.6235}) == 0.0
    assert "where a hostile program cannot forge its metric" in " ".join(GUIDE.split())


def test_the_process_sandbox_cannot_hide_the_host_answers_as_the_readme_says():
    task = make_task(str(FIXTURES / "public_private_regression"))
    out = evaluate(task, hostile_solution(task))
    assert "private visible: False" in out.stdout_tail  # not in its working directory...
    assert "host answers read" in out.stdout_tail and out.metrics["metric"] == 0.0  # ...but readable on the host
    assert "`process` cannot hide them" in " ".join(GUIDE.split())


def test_a_grader_exception_refuses_the_submission(tmp_path):
    task = make_task(str(FIXTURES / "public_private_regression"))
    g = task.grade(task.instances()[0], b"id,y\n0,1.0\n")
    assert not g.valid and "no prediction for ids" in g.feedback


# ----- the score map --------------------------------------------------------------------------------

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


@given(m0=finite, a=finite, b=finite, higher=st.booleans(), target=st.one_of(st.none(), finite))
def test_the_score_map_keeps_order_and_is_anchored_on_the_seed(m0, a, b, higher, target):
    lo, hi = min(a, b), max(a, b)
    s_lo, s_hi = (anchored_score(x, m0, higher, target) for x in (lo, hi))
    assert 0.0 <= s_lo <= 1.0 and 0.0 <= s_hi <= 1.0
    assert (s_lo <= s_hi) if higher else (s_lo >= s_hi)
    assert anchored_score(m0, m0, higher, target) == 0.5


@given(m0=finite, gap=st.floats(min_value=1e-3, max_value=1e3), higher=st.booleans())
def test_the_target_scores_one_and_its_mirror_zero(m0, gap, higher):
    target = m0 + gap if higher else m0 - gap
    assert anchored_score(target, m0, higher, target) == pytest.approx(1.0)
    assert anchored_score(2 * m0 - target, m0, higher, target) == pytest.approx(0.0, abs=1e-9)
    assert anchored_score(m0 + (target - m0) / 2, m0, higher, target) == pytest.approx(0.75)


def test_without_a_seed_value_a_valid_answer_scores_one_half():
    assert anchored_score(3.0, None) == 0.5


def test_target_flag_reaches_the_task(tmp_path):
    task = make_task(str(FIXTURES / "openevolve_minimize"), target=1.0)
    assert task.target == 1.0
    assert task.score(task.instances()[0], {"metric": 1.0}, {"metric": 0.6}) == 1.0
    assert Path(task.root).is_absolute()


# ----- metric:value's own convention: `python benchmark.py <solution_file>` ---------------------------

ARGV_BENCHMARK = '''"""Loads the solution from the path in sys.argv[1], as the format's own tasks/ folders do."""
import importlib.util
import os
import sys

path = sys.argv[1]
os.chdir("..")  # a benchmark may change directory: the path it was given must still name the solution
spec = importlib.util.spec_from_file_location("candidate", path)
candidate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(candidate)
print(f"SCORE:{candidate.score_of(3.0):.6f}")
'''


def argv_folder(root: Path) -> Path:
    root.mkdir()
    (root / "config.py").write_text('TASK_NAME = "Reach 10"\nMETRIC_NAME = "SCORE"\n')
    (root / "initial_solution.py").write_text(
        "# EVOLVE-BLOCK-START\ndef score_of(x):\n    weight = 2.0\n    return weight * x\n# EVOLVE-BLOCK-END\n"
    )
    (root / "benchmark.py").write_text(ARGV_BENCHMARK)
    return root


@pytest.mark.slow
def test_metric_value_benchmark_gets_the_solution_path_as_argv_1(tmp_path):
    folder = argv_folder(tmp_path / "argv_task")
    task = make_task(str(folder))
    assert task.metric_name == "SCORE"
    seed = evaluate(task, task.seed_files())
    assert seed.status == "ok", seed.feedback
    assert seed.metrics["metric"] == pytest.approx(6.0)
    # a whole search, default workers and sandbox (auto: bwrap where it works)
    out = run_cli("--task", str(folder), "--budget", "6", "--run-dir", str(tmp_path / "runs"))
    assert out.returncode == 0, out.stderr + out.stdout
    run = only_run(tmp_path / "runs")
    assert_budget_invariants(run, 6)
    assert read(
        run, "SELECT score, status FROM evaluations WHERE node_id = 0 AND split = 'dev' AND \"repeat\" = 0"
    ) == [(0.5, "ok")]
    assert read(run, "SELECT count(*) FROM evaluations WHERE split = 'dev' AND status = 'ok'")[0][0] >= 2


def test_openevolve_fitness_skips_booleans_like_openevolve() -> None:
    from tasks.adapters.openevolve import fitness

    assert fitness({"accuracy": 0.5, "valid": True}) == 0.5  # a flag is not a score
    assert fitness({"combined_score": 0.25, "speed": 9.0}) == 0.25
    assert fitness({"score": 1.0, "size": 3.0}, feature_dimensions=["size"]) == 1.0


def test_openevolve_feedback_carries_the_artifacts_error() -> None:
    import json

    task = make_task(str(FIXTURES / "openevolve_minimize"))
    answer = {
        "metrics": {"runs_successfully": 0.0, "combined_score": 0.0},
        "stage": 1,
        "stages": 2,
        "artifacts": {"error": "No test cases found", "suggestion": "add data"},
    }
    g = task.grade(task.instances()[0], json.dumps(answer).encode())
    assert g.valid and g.caught == "No test cases found" and g.metrics["failed_metric"] == 0.0
    assert "error: No test cases found" in g.feedback and "suggestion" not in g.feedback
