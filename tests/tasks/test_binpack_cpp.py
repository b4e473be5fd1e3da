"""binpack_cpp, the built-in task whose agent is C++ (issue 17): built by g++ in the sandbox under its own build
limit, run under another, graded outside; and a default search that improves the seed."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("tree_sitter", reason="tree-sitter is not installed (the languages extra)")
if shutil.which("g++") is None:
    pytest.skip("g++ is not installed (Debian: g++)", allow_module_level=True)

from engine.front.cli import build_parser, main
from engine.front.run import run_from_args
from engine.loop.evaluation import run_agent
from engine.mutators import check_child
from engine.sandbox import make_sandbox
from engine.sandbox.docker_build import COMPILERS_IMAGE
from tasks import make_task
from tasks.base import Instance
from tasks.binpack.packing import best_fit, pack_online
from tasks.binpack.task import BinPackTask
from tasks.binpack_cpp import runner
from tasks.binpack_cpp.task import BinPackCppTask
from tests.engine.test_search_e2e import only_run, read

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "binpack"


def evaluate(task, jobs):
    """Outcomes of (files, instance) jobs, run at once in the strongest sandbox here, as a run's default has it:
    docker's image is then the one with the compilers (engine/front/backend.py)."""
    sandbox = make_sandbox("auto", image=COMPILERS_IMAGE)

    async def every():
        return await asyncio.gather(*(run_agent(task, sandbox, files, inst) for files, inst in jobs))

    return asyncio.run(every())


def with_priority(task, body: str) -> dict[str, str]:
    """The seed program with its EVOLVE-BLOCK replaced by `body`."""
    seed = task.seed_files()["agent.cpp"]
    start, end = seed.index("// EVOLVE-BLOCK-START"), seed.index("// EVOLVE-BLOCK-END")
    return {"agent.cpp": seed[:start] + "// EVOLVE-BLOCK-START\n" + body + "\n" + seed[end:]}


def test_the_seed_and_best_fit_run_on_dev_and_holdout_as_binpack_packs_them():
    task = make_task("binpack_cpp")
    instances = task.instances()
    assert [i.split for i in instances].count("dev") == 4 and [i.split for i in instances].count("holdout") == 8
    assert {i.id for i in instances} <= {i.id for i in BinPackTask().instances()}  # binpack's own instances
    assert check_child(task.seed_files(), task.entry_file, task.entry_function, task.entry_args) is None
    dev = next(i for i in instances if i.split == "dev")
    holdout = next(i for i in instances if i.split == "holdout" and i.id.startswith("weibull"))
    best = task.reference_agents()["best_fit"]
    seed_dev, seed_holdout, best_dev = evaluate(
        task, [(task.seed_files(), dev), (task.seed_files(), holdout), (best, dev)]
    )
    assert seed_dev.status == seed_holdout.status == best_dev.status == "ok", (seed_dev, seed_holdout, best_dev)
    python_best = pack_online(best_fit, dev.data["capacity"], dev.data["items"])  # tasks/binpack's packer
    assert best_dev.metrics["bins"] == len(set(python_best.tolist()))
    assert seed_dev.metrics["bins"] > best_dev.metrics["bins"]  # a mediocre seed: room for the search
    assert task.score(dev, best_dev.metrics, seed_dev.metrics) > 0.5


@pytest.mark.skipif(not SHARED.is_dir(), reason=f"FunSearch data not found at {SHARED}")
@pytest.mark.parametrize("dataset, ff_bins, bf_bins", [("or3", 212.75, 212.0), ("weibull5k", 2071.8, 2067.0)])
def test_the_cpp_packer_gives_funsearchs_published_figures(tmp_path, monkeypatch, dataset, ff_bins, bf_bins):
    """Romera-Paredes et al. 2024, Table 1, through this task's main(), runner and grader (built once, outside
    a sandbox, to keep it quick): first fit and best fit as C++ priorities, as tests/tasks/test_binpack.py does
    for the Python packer."""
    task = BinPackCppTask(instances_path=str(SHARED / f"{dataset}.json"))
    monkeypatch.chdir(tmp_path)
    for files, expected in (
        (with_priority(task, "double priority(double item, double remaining) {\n    return 0.0;\n}"), ff_bins),
        (task.reference_agents()["best_fit"], bf_bins),
    ):
        Path("agent.cpp").write_text(files["agent.cpp"])
        assert runner.run(runner.BUILD_COMMAND, runner.BUILD_S)[0] == 0
        bins = []
        for inst in task.instances():
            answer = runner.answer_of(*runner.run(["./agent"], runner.RUN_S, runner.program_input(inst.data)))
            bins.append(task.grade(inst, json.dumps(answer).encode()).metrics["bins"])
        assert sum(bins) / len(bins) == pytest.approx(expected, abs=1e-9)


def test_the_grader_refuses_an_overfull_bin_a_missing_item_and_passes_on_the_runners_error():
    task = make_task("binpack_cpp")
    inst = Instance("tiny", "dev", {"capacity": 10.0, "items": [6.0, 5.0, 4.0]})
    assert task.grade(inst, json.dumps([0, 1, 0]).encode()).metrics["bins"] == 2
    over = task.grade(inst, json.dumps([0, 0, 1]).encode())
    assert not over.valid and "over capacity" in over.feedback
    missing = task.grade(inst, json.dumps([0, 1]).encode())
    assert not missing.valid and "one bin per item" in missing.feedback
    failed = task.grade(inst, json.dumps({"error": "build failed: agent.cpp:3: error: x"}).encode())
    assert not failed.valid and failed.feedback == "build failed: agent.cpp:3: error: x"


def test_a_program_that_does_not_build_gets_the_compiler_error_as_feedback():
    task = make_task("binpack_cpp")
    dev = task.instances()[0]
    broken = with_priority(
        task, "double priority(double item, double remaining) {\n    return undeclared_weight * (remaining - item);\n}"
    )
    (outcome,) = evaluate(task, [(broken, dev)])
    assert outcome.status == "bad_output"
    assert outcome.feedback.startswith("build failed: ") and "undeclared_weight" in outcome.feedback


def test_the_build_limit_and_the_run_limit_are_each_enforced_and_named():
    dev = make_task("binpack_cpp").instances()[0]
    slow_build = BinPackCppTask(build_s=0.05)  # g++ takes about half a second
    (built,) = evaluate(slow_build, [(slow_build.seed_files(), dev)])
    assert built.status == "bad_output" and "took more than the build limit of 0.05 s" in built.feedback
    task = BinPackCppTask(run_s=1.0)
    endless = with_priority(
        task,
        "double priority(double item, double remaining) {\n"
        "    volatile double spin = 0.0;\n    while (spin >= 0.0) { spin += 1.0; }\n"
        "    return spin;\n}",
    )
    (ran,) = evaluate(task, [(endless, dev)])
    assert ran.status == "bad_output" and "ran more than the run limit of 1 s" in ran.feedback
    assert task.limits.timeout_s >= task.build_s + task.run_s  # the sandbox's own limit covers both


def test_without_gxx_the_task_is_refused_in_one_line_before_a_run_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("tasks.binpack_cpp.task.shutil.which", lambda name: None)
    assert main(["--task", "binpack_cpp", "--budget", "4", "--run-dir", str(tmp_path / "runs"), "--quiet"]) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "g++" in err and "binpack_cpp" in err
    assert not (tmp_path / "runs").exists()


@pytest.mark.slow
def test_a_default_search_ends_on_a_node_better_than_the_seed_on_dev_and_holdout(tmp_path):
    argv = ["--task", "binpack_cpp", "--budget", "16", "--run-dir", str(tmp_path / "runs"), "--quiet"]
    assert run_from_args(build_parser().parse_args(argv)) == 0  # sandbox auto, 2 workers: the defaults
    run = only_run(tmp_path / "runs")
    final = read(run, "SELECT node_id FROM events WHERE kind = 'select_final'")[0][0]
    assert final != 0

    def mean(node, split, what="score"):
        column = "score" if what == "score" else "(metrics->>'excess')::DOUBLE"
        return read(
            run, f"SELECT avg({column}) FROM evaluations WHERE node_id = {node} AND split = '{split}' AND status = 'ok'"
        )[0][0]

    assert mean(final, "dev") > mean(0, "dev") == 0.5
    assert mean(final, "holdout") > mean(0, "holdout") == 0.5
    assert mean(final, "holdout", "excess") < mean(0, "holdout", "excess")
