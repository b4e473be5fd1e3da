"""A sweep of model runs: the real litellm over real HTTP (an OpenAI-compatible stub on loopback, a priced
model name), its cells' spend booked, the whole sweep's `--max-cost` shared so that the cells' caps together
never pass it (and their spend by at most the call that crosses each cap, the rule of `clade search
--max-cost`: engine/llm/budget.py), and the dollar curves drawn."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO, small_instances
from tests.engine.llm.openai_stub import Answer, OpenAIStub
from tests.engine.test_llm_search import good_diff

pytestmark = pytest.mark.slow
CAP = 0.004  # dollars for the whole sweep: a few calls of gpt-4o-mini's price per cell


def good(body: dict, n: int) -> Answer:
    return Answer("OK") if body.get("max_tokens") == 5 else Answer(good_diff(body["messages"], n))


def test_the_sweeps_cap_is_shared_and_held(tmp_path):
    import clade

    instances = small_instances(tmp_path / "instances.json", n_dev=3, n_holdout=2, n_items=60)
    env = dict(os.environ, PYTHONPATH=str(REPO), LITELLM_LOCAL_MODEL_COST_MAP="True", OPENAI_API_KEY="sk-stub")
    with OpenAIStub(good) as stub:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "clade",
                "sweep",
                "--task",
                "binpack",
                "--instances",
                str(instances),
                "--model",
                "openai/gpt-4o-mini",
                "--api-base",
                stub.url,
                "--grid",
                "policy=hgm,greedy",
                "--seeds",
                "2",
                "--budget",
                "40",
                "--sandbox",
                "process",
                "--max-cost",
                str(CAP),
                "--parallel",
                "2",
                "--sweep-dir",
                str(tmp_path / "sweeps"),
            ],  # fmt: skip
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        assert len(stub.requests) > 4  # every cell called the model
    (folder,) = (tmp_path / "sweeps").iterdir()
    sweep = clade.open_sweep(folder)
    caps = [sweep.run(cell.name).config.llm.max_cost for cell in _cells(folder)]
    assert all(cap is not None and cap > 0 for cap in caps) and sum(caps) <= CAP + 1e-9
    cells = sweep.cells()
    spent = [float(x) for x in cells["dollars"]]
    last_call = [float(sweep.run(cell.name).llm_calls()["cost_usd"].max()) for cell in _cells(folder)]
    assert all(x > 0 for x in spent) and sum(spent) > 0.75 * CAP  # the cap, not the budget, ended the cells
    for mine, cap, call in zip(spent, caps, last_call, strict=True):
        assert mine <= cap + call + 1e-9  # the call that crossed its share was its last
    assert sum(spent) <= CAP + sum(last_call) + 1e-9
    assert "$0.00" in done.stdout or "$" in done.stdout  # the table's spend column
    dollars = sweep.curves(x="dollars")
    assert len(dollars) > 0 and float(dollars["x"].max()) <= max(spent) + 1e-12


def _cells(folder):
    from engine.sweep.manifest import read_manifest

    return read_manifest(folder).cells
