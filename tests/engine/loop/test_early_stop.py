"""Early stopping: `--patience N` and `--target X` end a search once the best full-dev mean stops rising or
reaches the target; the finale still runs, the summary and an event say why, and a resume counts from the
archive."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest

from engine.config import RunConfig
from engine.config.sections import SearchSection
from engine.errors import UserError
from engine.front.cli import build_parser
from engine.front.run import run_from_args
from engine.loop.early_stop import EarlyStop
from engine.runinfo.cli import main as runs_main
from tests.conftest import REPO, small_instances
from tests.engine.test_search_e2e import only_run, read

DEV = ("a", "b")


def test_patience_counts_every_dev_evaluation_since_the_best_full_dev_mean_last_rose():
    watch = EarlyStop(n_dev=2, patience=3)
    watch.evaluated(0, "a", 0, 0.5)
    assert watch.best_node is None and watch.since == 0  # no node covers every dev instance yet
    watch.evaluated(0, "b", 0, 0.5)
    assert (watch.best_node, watch.best, watch.since) == (0, 0.5, 0)
    watch.evaluated(1, "a", 0, 0.9)  # a high partial mean is not a full-dev mean
    watch.evaluated(1, "b", 0, 0.2)  # 0.55: the best rises
    assert (watch.best_node, watch.since) == (1, 0)
    watch.evaluated(2, "a", 0, 0.6)
    watch.evaluated(2, "b", 0, 0.5)  # 0.55 again: no rise
    assert watch.verdict() is None and watch.since == 2
    watch.evaluated(1, "a", 1, 0.0)  # a re-measure counts in patience, not in the first-repeat mean
    line, detail = watch.verdict()
    assert line == "stopped early: no improvement in 3 evaluations; best node 1"
    assert detail["rule"] == "patience" and detail["best_node"] == 1 and detail["evaluations_since"] == 3
    assert detail["best_mean"] == pytest.approx(0.55)


def test_the_target_stops_once_a_full_dev_mean_reaches_it():
    watch = EarlyStop(n_dev=2, target=0.75)
    for node, instance, score in [(0, "a", 0.5), (0, "b", 0.5), (1, "a", 1.0), (1, "b", 0.4)]:
        watch.evaluated(node, instance, 0, score)
    assert watch.verdict() is None  # 0.7
    watch.evaluated(2, "a", 0, 0.75)
    watch.evaluated(2, "b", 0, 0.75)
    line, detail = watch.verdict()
    assert line.startswith("stopped early: target 0.75 reached; best node 2") and detail["rule"] == "target"


def test_a_replayed_history_gives_the_same_count_as_following_it():
    history = [(0, "a", 0, 0.5), (0, "b", 0, 0.5), (1, "a", 0, 0.7), (1, "b", 0, 0.7), (2, "a", 0, 0.1)]
    followed = EarlyStop(n_dev=2, patience=5)
    for item in history:
        followed.evaluated(*item)
    replayed = EarlyStop(n_dev=2, patience=5).replay(history)
    assert (replayed.best_node, replayed.best, replayed.since) == (followed.best_node, followed.best, 1)
    assert not EarlyStop(n_dev=2).active


def test_target_means_a_score_for_a_built_in_task_and_1_for_a_task_folder():
    assert SearchSection(target=0.8).stop_score() == 0.8
    assert SearchSection().stop_score() is None
    folder = str(REPO / "tests/fixtures/tasks/openevolve_minimize")
    assert SearchSection(task=folder, target=-1.5).stop_score() == 1.0  # the metric value that scores 1
    with pytest.raises(UserError, match="built-in task binpack is a score from 0 to 1"):
        SearchSection(target=2.0).validate()
    with pytest.raises(UserError, match="--patience must be 1 or more"):
        SearchSection(patience=0).validate()
    arena = RunConfig().with_overrides(task="email_validation", arena="single", patience=5)
    with pytest.raises(UserError, match="the arena plays its rounds to the budget"):
        arena.validate()


@pytest.fixture
def instances_file(tmp_path):
    """2 dev instances and 1 holdout: few evaluations in each session's fixed part (the seed, holdout, the
    reference agent)."""
    return small_instances(tmp_path / "instances.json", n_dev=2, n_holdout=1)


def search(*argv: str) -> int:
    return run_from_args(build_parser().parse_args([*argv, "--quiet"]))


def early_stops(run) -> list[tuple]:
    return read(
        run,
        "SELECT node_id, detail->>'rule', detail->>'reason', (detail->>'evaluations_since')::INT FROM events "
        "WHERE kind = 'early_stop' ORDER BY seq",
    )


def dev_evaluations(run) -> int:
    return read(run, "SELECT count(*) FROM evaluations WHERE split = 'dev'")[0][0]


@pytest.mark.slow
def test_patience_stops_a_search_that_no_longer_improves_and_a_resume_counts_from_the_archive(
    tmp_path, instances_file, capsys
):
    common = ("--workers", "1", "--sandbox", "process", "--seed", "0")
    runs = tmp_path / "runs"
    assert (
        search(
            "--budget", "100", "--patience", "4", *common, "--instances", str(instances_file), "--run-dir", str(runs)
        )
        == 0
    )
    run = only_run(runs)
    [(best, rule, reason, since)] = early_stops(run)
    assert (
        rule == "patience"
        and since == 4
        and reason == f"stopped early: no improvement in 4 evaluations; best node {best}"
    )
    spent = dev_evaluations(run)
    assert spent < 100
    assert f": {reason}; {spent}/100 dev evaluations" in capsys.readouterr().out  # the summary's first line
    assert read(run, "SELECT status FROM runs")[0][0] == "finished"
    assert runs_main(["show", str(run)]) == 0
    assert f"finished ({reason})" in " ".join(capsys.readouterr().out.split())  # `runs show`'s status
    from engine.report import write_report

    assert f"status finished ({reason})" in write_report(run).read_text()  # the report's heading
    assert read(run, "SELECT count(*) FROM events WHERE kind = 'select_final'")[0][0] == 1  # the usual finale
    assert read(run, "SELECT count(*) FROM evaluations WHERE split = 'holdout'")[0][0] > 0
    assert search("--resume", str(run)) == 0  # the same patience, counted from the archive: stops at once
    assert dev_evaluations(run) == spent and len(early_stops(run)) == 2
    assert search("--resume", str(run), "--patience", "7") == 0  # asked for more: goes on
    assert dev_evaluations(run) > spent
    last = early_stops(run)[-1]
    assert last[1] == "patience" and last[3] == 7 and "no improvement in 7 evaluations" in last[2]


@pytest.mark.slow
def test_a_target_stops_a_search_on_a_built_in_task(tmp_path, instances_file, capsys):
    runs = tmp_path / "runs"
    argv = ("--budget", "100", "--target", "0.6", "--workers", "1", "--sandbox", "process", "--seed", "0")
    assert search(*argv, "--instances", str(instances_file), "--run-dir", str(runs)) == 0
    run = only_run(runs)
    [(best, rule, reason, _)] = early_stops(run)
    assert rule == "target" and reason.startswith(f"stopped early: target 0.6 reached; best node {best} (")
    assert dev_evaluations(run) < 100 and reason in capsys.readouterr().out
    full = read(
        run,
        f"SELECT avg(score), count(DISTINCT instance_id) FROM evaluations WHERE node_id = {best} AND split = 'dev' "
        'AND "repeat" = 0',
    )[0]
    assert full[0] >= 0.6 and full[1] == 2  # a full-dev mean reached the target
