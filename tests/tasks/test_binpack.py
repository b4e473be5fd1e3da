"""Bin packing: the evaluator against FunSearch's published figures, the score, the grader's refusals."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tasks.base import Instance
from tasks.binpack import instances as instance_sets
from tasks.binpack.packing import best_fit, first_fit, pack_online
from tasks.binpack.task import BinPackTask, score_saved

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "binpack"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"FunSearch data not found at {SHARED}")


def grade_with(task: BinPackTask, priority, instance: Instance):
    chosen = pack_online(priority, instance.data["capacity"], instance.data["items"])
    return task.grade(instance, json.dumps(chosen.tolist()).encode())


@needs_shared
@pytest.mark.parametrize(
    "dataset, ff_bins, ff_excess, bf_bins, bf_excess",
    [
        ("or3", 212.75, 5.74, 212.0, 5.37),
        ("weibull5k", 2071.8, 4.23, 2067.0, 3.98),
    ],
)
def test_funsearch_published_figures(dataset, ff_bins, ff_excess, bf_bins, bf_excess):
    """Romera-Paredes et al. 2024 (Nature), Table 1: first fit and best fit on OR3 and Weibull 5k."""
    task = BinPackTask(instances_path=str(SHARED / f"{dataset}.json"))
    data = json.loads((SHARED / f"{dataset}.json").read_text())
    instances = [Instance(name, "dev", {"capacity": v["capacity"], "items": v["items"]}) for name, v in data.items()]
    for priority, bins, excess in ((first_fit, ff_bins, ff_excess), (best_fit, bf_bins, bf_excess)):
        grades = [grade_with(task, priority, inst) for inst in instances]
        assert all(g.valid for g in grades)
        mean_bins = np.mean([g.metrics["bins"] for g in grades])
        l1 = np.mean([g.metrics["l1"] for g in grades])
        assert mean_bins == pytest.approx(bins, abs=1e-9)
        assert 100 * (mean_bins / l1 - 1) == pytest.approx(excess, abs=0.005)


def test_best_fit_beats_first_fit_by_a_tenth_of_score_on_dev():
    task = BinPackTask()
    dev = [i for i in task.instances() if i.split == "dev"]
    assert len(dev) == 16
    ff = [grade_with(task, first_fit, i).metrics for i in dev]
    bf = [grade_with(task, best_fit, i).metrics for i in dev]
    ff_scores = [task.score(i, m, m) for i, m in zip(dev, ff)]
    bf_scores = [task.score(i, b, f) for i, b, f in zip(dev, bf, ff)]
    assert np.mean(ff_scores) == pytest.approx(0.5)
    assert np.mean(bf_scores) - np.mean(ff_scores) >= 0.1, np.mean(bf_scores)


def test_score_mapping_is_monotone_and_centred():
    saved = np.arange(-10, 11)
    scores = [score_saved(s) for s in saved]
    assert scores[10] == 0.5
    assert all(a < b for a, b in zip(scores, scores[1:]))
    assert 0 < scores[0] < scores[-1] < 1


def test_score_falls_back_to_first_fit_without_a_seed_result():
    task = BinPackTask()
    inst = next(i for i in task.instances() if i.split == "dev")
    ff = grade_with(task, first_fit, inst).metrics
    assert task.score(inst, ff, None) == pytest.approx(0.5)


@pytest.mark.parametrize(
    "answer, why",
    [
        (b"not json", "not JSON"),
        (b'{"a": 1}', "one bin per item"),
        (json.dumps([0, 0, 0]).encode(), "one bin per item"),
        (json.dumps([0] * 4).encode(), "over capacity"),
        (json.dumps([0, 1, 2, 9]).encode(), "integer index"),
        (json.dumps([0, 1, 2, 3.0]).encode(), "integer index"),
        (json.dumps([0, 1, 2, True]).encode(), "integer index"),
        (json.dumps([0, 1, 2, -1]).encode(), "integer index"),
    ],
)
def test_grader_refuses_bad_answers(answer, why):
    task = BinPackTask()
    inst = Instance("tiny", "dev", {"capacity": 10.0, "items": [6.0, 6.0, 6.0, 6.0]})
    grade = task.grade(inst, answer)
    assert not grade.valid and why in grade.feedback


def test_grader_counts_bins_and_lower_bound():
    task = BinPackTask()
    inst = Instance("tiny", "dev", {"capacity": 10.0, "items": [6.0, 4.0, 5.0, 5.0, 3.0]})
    grade = task.grade(inst, json.dumps([0, 0, 1, 1, 2]).encode())
    assert grade.valid and grade.metrics == {"bins": 3, "l1": 3, "excess": 0.0}


def test_generated_instances_follow_funsearch_families():
    insts = instance_sets.generate(0, {"dev": 3, "holdout": 2})
    assert len(insts) == 10 and {i.split for i in insts} == {"dev", "holdout"}
    assert len({i.id for i in insts}) == 10
    for inst in insts:
        items = np.asarray(inst.data["items"])
        if inst.id.startswith("or"):
            assert inst.data["capacity"] == 150 and items.min() >= 20 and items.max() <= 100 and len(items) == 500
        else:
            assert inst.data["capacity"] == 100 and items.min() >= 1 and items.max() <= 100 and len(items) == 1000
    assert instance_sets.generate(0, {"dev": 3}) == instance_sets.generate(0, {"dev": 3})


def test_instances_file_loading(tmp_path):
    path = tmp_path / "inst.json"
    path.write_text(
        json.dumps(
            {
                "a": {"capacity": 10, "items": [1, 2]},
                "b": {"capacity": 10, "items": [3]},
                "c": {"capacity": 10, "items": [4], "split": "holdout"},
            }
        )
    )
    loaded = instance_sets.load(path)
    assert [(i.id, i.split) for i in loaded] == [("a", "dev"), ("b", "holdout"), ("c", "holdout")]
    path.write_text(json.dumps({"a": {"capacity": 10, "items": [11]}}))
    with pytest.raises(instance_sets.InstanceFileError, match="outside"):
        instance_sets.load(path)
    path.write_text("[1, 2")
    with pytest.raises(instance_sets.InstanceFileError, match="cannot read"):
        instance_sets.load(path)
