"""OpenEvolve's database as a parent rule, on hand-built trees: islands, migration, MAP-Elites, 0.2/0.7/0.1."""

from __future__ import annotations

import numpy as np
import pytest
from hand_trees import SCORES, add

from search import OpenEvolvePolicy, make_policy
from search.decisions import Evaluate, Expand
from search.tree import TreeStats

N = 4


def test_islands_round_robin_for_root_children_inherited_below():
    tree = TreeStats(N)
    add(tree, None, 0.5)
    for _ in range(6):
        add(tree, 0, 0.5)  # ids 1..6: islands 0, 1, 2, 3, 4, 0
    add(tree, 2, 0.5)  # 7: node 2's island, 1
    add(tree, 7, 0.5)  # 8: 1
    add(tree, 6, None, valid=False)  # 9: node 6's island, 0
    policy = OpenEvolvePolicy()
    assert list(policy.island_of(tree.view())) == [-1, 0, 1, 2, 3, 4, 0, 1, 1, 0]
    assert policy.turn(tree.view()) == (10 - 1) % 5
    assert policy.turn(tree.view(pending_expansions=2)) == (10 - 1 + 2) % 5


def two_islands() -> TreeStats:
    """root 0.5; island 0: 1 (0.75, feature 100), 3 (1.0, feature 100); island 1: 2 (0.25), 4 (0.5)."""
    tree = TreeStats(N)
    add(tree, None, 0.5, feature=100)
    add(tree, 0, 0.75, feature=100)
    add(tree, 0, 0.25, feature=200)
    add(tree, 0, 1.0, feature=100)
    add(tree, 0, 0.5, feature=400)
    return tree


def test_probabilities_mix_explore_elites_and_fitness():
    view = two_islands().view()
    policy = OpenEvolvePolicy(num_islands=2, migration_interval=100)  # no migration yet
    assert policy.turn(view) == 0
    # island 0: root, 1, 3. Features over valid nodes 100..400, depth 0..1, 10 bins each:
    # root (0, 0); 1 (0, 9); 3 (0, 9): node 3 (1.0) is the cell's champion over 1 (0.75). Elites: root, 3.
    explore = 0.2 / 3
    exploit = 0.7 / 2
    weighted = {0: 0.1 * 0.5 / 2.25, 1: 0.1 * 0.75 / 2.25, 3: 0.1 * 1.0 / 2.25}
    p = policy.probabilities(view)
    assert p[0] == pytest.approx(explore + exploit + weighted[0])  # 0.43889
    assert p[1] == pytest.approx(explore + weighted[1])  # 0.1
    assert p[3] == pytest.approx(explore + exploit + weighted[3])  # 0.46111
    assert p[2] == p[4] == 0.0
    assert p.sum() == pytest.approx(1.0)
    assert list(policy.elites(view, np.array([0, 1, 3]), *_means_state(policy, view))) == [0, 3]
    # island 1: root, 2, 4: features 200 -> bin 3, 400 -> bin 9: three cells, everyone an elite
    q = policy.island_probabilities(view, 1)
    w = {0: 0.5, 2: 0.25, 4: 0.5}
    for node in (0, 2, 4):
        assert q[node] == pytest.approx(0.2 / 3 + 0.7 / 3 + 0.1 * w[node] / 1.25)


def _means_state(policy, view):
    state, _, means = policy.state(view)
    return means, state


def test_decide_matches_probabilities_and_is_deterministic():
    view = two_islands().view()
    policy = OpenEvolvePolicy(num_islands=2, migration_interval=100)
    p = policy.probabilities(view)
    counts = np.zeros(view.n)
    for seed in range(4000):
        decision = policy.decide(view, np.random.default_rng(seed))
        assert isinstance(decision, Expand) and decision.detail["island"] == 0
        counts[decision.node_id] += 1
    assert np.abs(counts / counts.sum() - p).max() < 0.025
    a, b = np.random.default_rng(4), np.random.default_rng(4)
    assert [policy.decide(view, a) for _ in range(30)] == [policy.decide(view, b) for _ in range(30)]


def migration_tree(evaluate_5: bool) -> TreeStats:
    """3 islands, a migration every 3 expansions. Root children 1, 2, 3 (islands 0, 1, 2);
    4 under 1, 5 under 2, 6 under 3. Means: 1 .25, 2 .5, 3 1.0, 4 .75, 5 (1.0 or not yet), 6 .5."""
    tree = TreeStats(N)
    add(tree, None, 0.5)
    for mean in (0.25, 0.5, 1.0):
        add(tree, 0, mean)
    add(tree, 1, 0.75)
    add(tree, 2, 1.0 if evaluate_5 else None)
    add(tree, 3, 0.5)
    return tree


def members(policy: OpenEvolvePolicy, view, island: int) -> list[int]:
    state, _, _ = policy.state(view)
    return list(np.flatnonzero(state.members(island, view.n)))


def test_ring_migration_joins_both_neighbours():
    policy = OpenEvolvePolicy(num_islands=3, migration_interval=1)
    view = migration_tree(evaluate_5=False).view()
    # migration 1 (nodes < 4): 1 -> islands 1, 2; 2 -> 2, 0; 3 -> 0, 1
    # migration 2 (nodes < 7): island 0 {1, 4}: 4 (.75); island 1 {2} (5 is not settled): 2; island 2 {3, 6}: 3
    assert members(policy, view, 0) == [0, 1, 2, 3, 4]
    assert members(policy, view, 1) == [0, 1, 2, 3, 4, 5]  # 5 is at home (not a candidate until settled)
    assert members(policy, view, 2) == [0, 1, 2, 3, 4, 6]
    state, _, _ = policy.state(view)
    assert len(state.epochs) == 2


def test_a_later_evaluation_recomputes_the_migration_as_from_scratch():
    policy = OpenEvolvePolicy(num_islands=3, migration_interval=1)
    tree = migration_tree(evaluate_5=False)
    assert 5 not in members(policy, tree.view(), 0)
    for i, x in enumerate(SCORES[1.0]):  # node 5 settles at 1.0: now island 1's best before migration 2
        tree.finish_evaluation(5, i, x, started=False)
    incremental = {island: members(policy, tree.view(), island) for island in range(3)}
    assert incremental[0] == [0, 1, 2, 3, 4, 5] and incremental[2] == [0, 1, 2, 3, 4, 5, 6]
    fresh = migration_tree(evaluate_5=True)  # the same tree built anew: the same islands
    assert {island: members(policy, fresh.view(), island) for island in range(3)} == incremental


def test_migrants_are_candidates_of_their_new_island():
    policy = OpenEvolvePolicy(num_islands=3, migration_interval=1)
    view = migration_tree(evaluate_5=True).view()
    p0 = policy.island_probabilities(view, 0)
    assert set(np.flatnonzero(p0)) == {0, 1, 2, 3, 4, 5}
    p0_before = OpenEvolvePolicy(num_islands=3, migration_interval=1000).island_probabilities(view, 0)
    assert set(np.flatnonzero(p0_before)) == {0, 1, 4}


def test_edge_cases():
    policy = make_policy("openevolve")
    rng = np.random.default_rng(0)
    assert policy.decide(TreeStats(N).view(), rng) is None
    tree = TreeStats(N)
    add(tree, None, None)
    assert isinstance(policy.decide(tree.view(), rng), Evaluate)
    for i in range(N):
        tree.finish_evaluation(0, i, 0.0, started=False)
    assert list(policy.probabilities(tree.view())) == [1.0]  # a single node; score 0 -> weight 0.001
    for _ in range(7):
        add(tree, 0, None, valid=False)  # every child invalid: the root, every island
    for seed in range(5):
        assert policy.decide(tree.view(), np.random.default_rng(seed)).node_id == 0
    with pytest.raises(ValueError):
        OpenEvolvePolicy(exploration_ratio=0.5, exploitation_ratio=0.7)


def test_an_island_without_candidates_draws_from_everyone():
    tree = TreeStats(N)
    add(tree, None, 0.5)
    add(tree, 0, 1.0)  # island 0
    add(tree, 0, None)  # island 1: open, not a candidate; the root is in every island anyway
    tree_view = tree.view()
    policy = OpenEvolvePolicy(num_islands=2, migration_interval=100)
    q = policy.island_probabilities(tree_view, 1)
    assert set(np.flatnonzero(q)) == {0}
    bare = TreeStats(N)
    add(bare, None, None, valid=False)
    assert OpenEvolvePolicy().decide(bare.view(), np.random.default_rng(0)) is None


def test_islands_kept_up_to_date_equal_islands_built_at_once():
    """The migrations are a function of the tree: followed step by step while the tree grows (and nodes are
    evaluated late, after the migrations they take part in) or computed in one go at the end, the same."""
    rng = np.random.default_rng(7)
    policy = OpenEvolvePolicy(num_islands=3, migration_interval=2)  # a migration every 6 expansions
    tree = TreeStats(N)
    add(tree, None, 0.5)
    late = []
    for step in range(150):
        valid = [i for i in range(tree.n) if tree.valid[i]]
        parent = valid[int(rng.integers(len(valid)))]
        node = add(tree, parent, None, feature=float(rng.integers(100, 900)), valid=bool(rng.random() > 0.1))
        if tree.valid[node]:
            late.append(node)
        if len(late) > 4 or step == 149:  # evaluate a few nodes several steps after they were made
            for old in late:
                for i, x in enumerate(SCORES[float(rng.choice([0.0, 0.25, 0.5, 0.75, 1.0]))]):
                    tree.finish_evaluation(old, i, x, started=False)
            late = []
        policy.state(tree.view())  # keep the cache in step
    view = tree.view()
    followed = [members(policy, view, i) for i in range(3)]
    state, _, _ = policy.state(view)
    assert len(state.epochs) == 150 // 6 and state.recomputed > len(state.epochs)  # some were recomputed
    rebuilt = TreeStats(N)  # the same numbers in a new tree: a new cache, built at once
    for node in range(tree.n):
        rebuilt.add_node(
            None if node == 0 else int(tree.parent[node]), bool(tree.valid[node]), feature=float(tree.feature[node])
        )
    for node in range(tree.n):
        if tree.n_evals[node]:
            mean = tree.s[node] / tree.n_evals[node]
            for i, x in enumerate(SCORES[float(mean)]):
                rebuilt.finish_evaluation(node, i, x, started=False)
    assert [members(policy, rebuilt.view(), i) for i in range(3)] == followed
    assert np.allclose(policy.island_probabilities(rebuilt.view(), 1), policy.island_probabilities(view, 1))


def stagnating() -> TreeStats:
    """2 islands. Island 0 (slot 0: nodes 1, 3, 5) reaches .75 at node 1, then .5 and .25: 2 expansions without
    improvement. Island 1 (slot 1: 2, 4, 6) improves to 1.0 at node 4."""
    tree = TreeStats(N)
    add(tree, None, 0.5)
    add(tree, 0, 0.75)  # 1: island 0
    add(tree, 0, 0.5)  # 2: island 1
    add(tree, 1, 0.5)  # 3: island 0, no better than .75
    add(tree, 2, 1.0)  # 4: island 1, its best
    add(tree, 1, 0.25)  # 5: island 0, the 2nd without improvement: island 2 takes slot 0, seeded from 4
    add(tree, 4, 0.5)  # 6: island 1
    return tree


def test_a_stagnating_island_is_replaced_by_one_seeded_from_the_best_of_the_others():
    policy = OpenEvolvePolicy(num_islands=2, migration_interval=100, island_stagnation=2)
    tree = stagnating()
    view = tree.view()
    (spawn,) = policy.spawns(view)
    assert (spawn.at, spawn.slot, spawn.island, spawn.stagnated, spawn.seed, spawn.seed_island) == (5, 0, 2, 0, 4, 1)
    assert "island 0 made 2 expansions without improving its best (0.75)" in spawn.record()["reason"]
    assert list(policy.island_of(view)) == [-1, -3, 1, -3, 1, -3, 1]  # island 0's nodes retired
    assert members(policy, view, 0) == [4]  # the new island holds its seed only, not the root
    assert policy.turn(view) == 0
    node, detail = policy.parent(view, np.random.default_rng(0))
    assert node == 4 and detail["island_number"] == 2 and detail["island_spawn"]["seed"] == 4
    add(tree, 4, 0.5)  # 7: the seed's child on the new island's turn is the new island's
    view = tree.view()
    assert list(policy.island_of(view))[7] == 0 and members(policy, view, 0) == [4, 7]
    assert "island_spawn" not in policy.parent(tree.view(pending_expansions=2), np.random.default_rng(0))[1]
    assert OpenEvolvePolicy(num_islands=2, migration_interval=100).spawns(view) == []  # off by default
    before = stagnating().view()  # island 0: 2 expansions without improvement, not 3
    assert OpenEvolvePolicy(num_islands=2, migration_interval=100, island_stagnation=3).spawns(before) == []


def test_spawns_are_a_pure_function_of_the_tree_and_decisions_repeat_for_a_seed():
    policy = make_policy("openevolve", num_islands=2, migration_interval=1, island_stagnation=2)
    grown, rebuilt = stagnating(), TreeStats(N)
    for node in range(grown.n):  # the same nodes, each evaluated as it is added
        parent = int(grown.parent[node])
        add(rebuilt, None if parent < 0 else parent, grown.mean(node))
        policy.decide(rebuilt.view(), np.random.default_rng(node))  # decisions along the way change nothing
    assert policy.spawns(rebuilt.view()) == policy.spawns(grown.view())
    first = [policy.decide(grown.view(), np.random.default_rng(7)) for _ in range(2)]
    assert first[0] == first[1] == policy.decide(rebuilt.view(), np.random.default_rng(7))
    with pytest.raises(ValueError, match="island_stagnation"):
        OpenEvolvePolicy(island_stagnation=0)


def test_a_member_with_its_last_instances_in_flight_is_drawn_on_the_scores_back():
    """Asynchronous draws (search.generational.drawable_mask): in the parent pool with its finished scores;
    a member with no score back, or an instance still open, is not."""
    tree = two_islands()  # nodes 1..4; the next, 5, is in island (5 - 1) mod 5 = 4: the root's child there
    child = tree.add_node(1, True, feature=100)  # island 0, node 1's child
    for instance in range(N):
        tree.start_evaluation(child, instance)
    policy = OpenEvolvePolicy()
    assert policy.island_probabilities(tree.view(), 0)[child] == 0.0  # nothing back yet
    tree.finish_evaluation(child, 0, 1.0)
    p = policy.island_probabilities(tree.view(), 0)
    assert p[child] > 0.0 and p.sum() == pytest.approx(1.0)
    assert child in policy.candidates(tree.view(), 0, policy.state(tree.view())[0])
    other = tree.add_node(3, True, feature=100)  # island 0: one instance back, the others still open
    tree.finish_evaluation(other, 0, 1.0, started=False)
    assert policy.island_probabilities(tree.view(), 0)[other] == 0.0
