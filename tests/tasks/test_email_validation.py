"""The email_validation task: its two sets, the sandbox never seeing a label, grading through the
evaluator, and the measurement the task exists for (a naive regex passes the typical tests and
fails the adversarial ones)."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from engine.loop.evaluation import run_agent
from engine.mutators import check_child
from engine.sandbox import ProcessSandbox
from tasks.base import Instance
from tasks.email_validation.task import DATA, EmailValidationTask, oracle_is_valid


@pytest.fixture(scope="module")
def task() -> EmailValidationTask:
    return EmailValidationTask()


@pytest.fixture(scope="module")
def sandbox():
    box = ProcessSandbox()
    yield box
    box.close()


def run_all(task, files, instances, sandbox, at_once: int = 8):
    async def main():
        gate = asyncio.Semaphore(at_once)

        async def one(instance):
            async with gate:
                return await run_agent(task, sandbox, files, instance)

        return await asyncio.gather(*[one(i) for i in instances])

    return asyncio.run(main())


def lookup_agent(instances: list[Instance]) -> dict[str, str]:
    """A perfect agent: the labels as a table (the test's stand-in for a correct validator)."""
    table = {a: v for i in instances for a, v in zip(i.data["addresses"], i.data["labels"])}
    return {
        "agent.py": f"import json\nTABLE = json.loads({json.dumps(json.dumps(table))})\n\n\n"
        "def is_valid(address):\n    return TABLE[address]\n"
    }


def test_the_splits_and_their_sizes(task):
    instances = task.instances()
    dev = [i for i in instances if i.split == "dev"]
    holdout = [i for i in instances if i.split == "holdout"]
    assert len(dev) == 4 and len(holdout) == 40
    assert all(len(i.data["addresses"]) == len(i.data["labels"]) == 25 for i in instances)
    labels = [v for i in holdout for v in i.data["labels"]]
    assert len(labels) == 1000 and 450 <= sum(labels) <= 550  # roughly half valid
    dev_addresses = {a for i in dev for a in i.data["addresses"]}
    assert not dev_addresses & {a for i in holdout for a in i.data["addresses"]}
    assert check_child(task.seed_files(), task.entry_file, task.entry_function, task.entry_args) is None


def test_no_label_reaches_the_sandbox(task):
    for instance in task.instances():
        files = task.sandbox_files(instance)
        assert set(files) == {"runner.py", "addresses.json"}
        sent = json.loads(files["addresses.json"])
        assert sent == {"addresses": instance.data["addresses"]}


def test_a_perfect_table_lookup_agent_scores_1_on_every_batch(task, sandbox):
    instances = task.instances()
    outcomes = run_all(task, lookup_agent(instances), instances, sandbox)
    assert [(o.status, o.feedback) for o in outcomes if o.status != "ok"] == []
    assert all(task.score(i, o.metrics, None) == 1.0 for i, o in zip(instances, outcomes))
    assert task.raw_value([o.metrics for o in outcomes]) == 100.0


def test_exceptions_and_non_bools_are_wrong_answers_not_a_crash(task, sandbox):
    instance = task.instances()[0]
    first, second = instance.data["addresses"][:2]
    table = json.dumps(json.dumps(dict(zip(instance.data["addresses"], instance.data["labels"]))))
    agent = {
        "agent.py": f"import json\nTABLE = json.loads({table})\n\n\ndef is_valid(address):\n"
        f"    if address == {first!r}:\n        raise ValueError('boom')\n"
        f"    if address == {second!r}:\n        return 'yes'\n"
        f"    return TABLE[address]\n"
    }
    (outcome,) = run_all(task, agent, [instance], sandbox)
    assert outcome.status == "ok", outcome.feedback
    assert outcome.metrics["correct"] == 23 and outcome.metrics["total"] == 25
    assert outcome.metrics["errors"] == 2 and outcome.metrics["false_accepts"] == 0
    assert repr(first) in outcome.feedback and "error/non-bool" in outcome.feedback
    assert task.score(instance, outcome.metrics, None) == pytest.approx(23 / 25)


def test_grading_counts_false_accepts_and_rejects(task):
    instance = Instance("t", "dev", {"addresses": ["a@b.com", "bad", "c@d.org"], "labels": [True, False, True]})
    grade = task.grade(instance, json.dumps({"answers": [False, True, True]}).encode())
    assert grade.valid and grade.metrics["correct"] == 1
    assert grade.metrics["false_accepts"] == 1 and grade.metrics["false_rejects"] == 1
    assert "'a@b.com' should be valid" in grade.feedback and "'bad' should be invalid" in grade.feedback
    assert not task.grade(instance, b'{"answers": [true]}').valid
    assert not task.grade(instance, b"not json").valid


def test_the_naive_seed_passes_the_typical_tests_and_fails_the_adversarial_ones(task, sandbox):
    """The measurement the task exists for, through the evaluator: dev (original) vs holdout (adversarial)."""
    instances = task.instances()
    outcomes = run_all(task, task.seed_files(), instances, sandbox)
    assert all(o.status == "ok" for o in outcomes)
    by_split = {s: [o.metrics for i, o in zip(instances, outcomes) if i.split == s] for s in ("dev", "holdout")}
    original = task.raw_value(by_split["dev"]) / 100
    adversarial = task.raw_value(by_split["holdout"]) / 100
    print(f"\nnaive seed accuracy: original (dev) {original:.3f}, adversarial (holdout) {adversarial:.3f}")
    assert original >= 0.9
    assert adversarial <= original - 0.15


def test_the_stored_labels_agree_with_the_oracle(task):
    pytest.importorskip("email_validator", reason="email-validator is not installed (the tasks extra)")
    disagree = [
        (a, v)
        for i in task.instances()
        for a, v in zip(i.data["addresses"], i.data["labels"])
        if oracle_is_valid(a) is not v
    ]
    assert disagree == []
    for name in ("original.json", "adversarial.json"):
        note = json.loads((DATA / name).read_text(encoding="utf-8"))["oracle"]
        assert re.search(r"email-validator \d", note) and "check_deliverability=False" in note
