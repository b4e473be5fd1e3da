"""Every policy by name: the registry, make_policy's options, determinism for a seed, no stalls, edge cases."""

from __future__ import annotations

import json

import numpy as np
import pytest

from search import POLICIES, make_policy
from search.decisions import Evaluate, Expand
from search.tree import TreeStats

NAMES = [
    "hgm",
    "dgm",
    "shinka",
    "shinka_power_law",
    "shinka_beam",
    "openevolve",
    "adas",
    "greedy",
    "uct",
    "best_of_n",
    "random",
]


def test_the_registry_holds_every_policy_of_the_issue():
    assert sorted(POLICIES) == sorted(NAMES)
    for name in NAMES:
        policy = make_policy(name)
        assert policy.name == name
        assert callable(policy.decide) and callable(policy.select_final)


def test_options_and_their_errors():
    assert make_policy("hgm", tau=2.0).tau == 2.0
    assert make_policy("shinka", archive_size=7).archive_size == 7
    assert make_policy("openevolve", num_islands=3).num_islands == 3
    assert make_policy("dgm", steepness=5.0).inner.steepness == 5.0
    for call in (
        lambda: make_policy("nope"),
        lambda: make_policy("uct", bogus=1),
        lambda: make_policy("shinka", stages="2"),
        lambda: make_policy("adas", final="best"),
    ):
        with pytest.raises(ValueError) as error:
            call()
        assert "\n" not in str(error.value)
    with pytest.raises(ValueError, match="takes: .*archive_size"):
        make_policy("shinka", lambda_=3)


def simulate(name: str, seed: int, budget: int = 120, workers: int = 2, n_instances: int = 6, **options):
    """A small search with an instantaneous mutator and results finishing in a seeded random order:
    (the decisions, the tree). A child's quality is its parent's plus noise; 10% of children are invalid."""
    policy = make_policy(name, **options)
    rng = np.random.default_rng(seed)
    world = np.random.default_rng(1000 + seed)
    tree = TreeStats(n_instances)
    tree.add_node(None, True, feature=1000.0)
    quality = [0.4]
    for i in range(n_instances):  # the seed first, as the scheduler does
        tree.finish_evaluation(0, i, float(world.random() < quality[0]), started=False)
    decisions, in_flight, started = [], [], n_instances
    while True:
        while len(in_flight) < workers and started < budget:
            decision = policy.decide(tree.view(budget=budget), rng)
            if decision is None:
                break
            decisions.append((type(decision).__name__, decision.node_id, getattr(decision, "instance", None)))
            json.dumps(decision.detail)  # written to the archive's events as JSON
            if isinstance(decision, Expand):
                valid = bool(world.random() > 0.1)
                tree.add_node(decision.node_id, valid, feature=float(world.integers(500, 3000)))
                quality.append(float(np.clip(quality[decision.node_id] + world.normal(0, 0.1), 0, 1)))
            else:
                assert isinstance(decision, Evaluate)
                tree.start_evaluation(decision.node_id, decision.instance)
                in_flight.append((decision.node_id, decision.instance))
                started += 1
        if not in_flight:
            break
        node, instance = in_flight.pop(int(world.integers(len(in_flight))))
        tree.finish_evaluation(node, instance, float(world.random() < quality[node]))
    return decisions, tree, policy


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_search_and_the_budget_is_spent(name):
    first, tree, policy = simulate(name, seed=3)
    again, _, _ = simulate(name, seed=3)
    assert first == again
    assert tree.evaluations_done == 120  # no stall: the budget is used up
    assert tree.in_flight == 0
    choice = policy.select_final(tree.view(budget=120), np.random.default_rng(0))
    assert choice is not None and tree.valid[choice.node_id]


@pytest.mark.parametrize("name", ["dgm", "shinka", "shinka_power_law", "openevolve", "random", "hgm"])
def test_stochastic_policies_depend_on_the_seed(name):
    runs = {tuple(simulate(name, seed=s, budget=80)[0]) for s in range(4)}
    assert len(runs) > 1


@pytest.mark.parametrize("name", NAMES)
def test_edge_cases(name):
    policy = make_policy(name)
    rng = np.random.default_rng(0)
    assert policy.decide(TreeStats(4).view(), rng) is None  # no node at all
    assert policy.select_final(TreeStats(4).view(), rng) is None
    broken = TreeStats(4)
    broken.add_node(None, False)
    assert policy.decide(broken.view(), rng) is None  # an invalid seed: nothing to do
    fresh = TreeStats(4)
    fresh.add_node(None, True)
    decision = policy.decide(fresh.view(), rng)
    assert isinstance(decision, Evaluate) and decision.node_id == 0  # nothing evaluated: the seed
    assert policy.select_final(fresh.view(), rng) is None
