"""OpenEvolve's program database as a parent rule (`openevolve`): islands, ring migration, MAP-Elites.

Source: OpenEvolve (algorithmicsuperintelligence/openevolve, an open
implementation of AlphaEvolve, Novikov et al. 2025), `openevolve/database.py`
(ProgramDatabase: `sample_from_island`, `migrate_programs`, the feature grid)
and `openevolve/config.py` (DatabaseConfig defaults).

Islands: `num_islands` = 5. The islands take turns, one expansion each: the
next expansion is island (nodes - 1 + pending expansions) mod 5's. A child
belongs to its parent's island (OpenEvolve: a child inherits its parent's
island); the root (the initial program) is in every island, and a child of
the root belongs to the island whose turn made it, island (id - 1) mod 5.
Migration (ring): every `migration_interval` = 50 generations of an island,
i.e. every 50 x 5 expansions, each island's top `migration_rate` = 10% (at
least one) by mean score joins both neighbouring islands, i - 1 and i + 1
(OpenEvolve copies them there; here no node is made: a migrant is a member of
the target island's candidate set). Migrants do not migrate again. The k-th
migration ranks the island's settled nodes made before it (ids < 1 + k x 250).
Parent choice within the island of the turn, over its candidates (members,
migrants included, evaluated with nothing left open: a member whose last
instances are in flight counts with the scores that came back, as
asynchronous Thompson sampling draws, Kandasamy et al. 2018,
search.generational.drawable_mask; with one worker, the settled members), as
OpenEvolve's `sample_from_island`:
- with probability 0.2 (`exploration_ratio`): uniform over the island;
- with 0.7 (`exploitation_ratio`): uniform over the island's elites;
- with the remaining 0.1: proportional to max(score, 0.001) over the island.
Elites: the island's MAP-Elites grid, one champion (highest mean, ties to the
older node) per cell of a 10 x 10 grid (`feature_bins` = 10) over two
features, each min-max scaled over every valid node and cut into 10 bins:
the node's `feature` (TreeStats.add_node; the engine passes the agent's code
size, OpenEvolve's "complexity" = code length) and its depth in the tree
(standing in for OpenEvolve's "diversity", an edit distance to a reference
set of programs that the view does not hold: depth counts the edits that
separate a node from the seed).
Departures: OpenEvolve's exploitation draws from its global elite archive
(the best 100 programs, `archive_size`) restricted to the island; here the
island's own grid champions, as the design asks ("a MAP-Elites grid per
island"). A program that loses its cell stays a member of its island (in
OpenEvolve it leaves the island); the population limit (1000) is not
applied; migration counts the top 10% among the island's own nodes (OpenEvolve
takes the top 10% of all members, skipping migrants). An island with no
candidate draws from every candidate instead, by the same rule (OpenEvolve: from any program).
Expansion vs evaluation: the shared loop of search.generational. Final
choice: HGM's epsilon-quantile rule by default (selectable, search.final).

Islands on stagnation (`island_stagnation` = S, `--island-stagnation S`; off by default, as in
OpenEvolve): ShinkaEvolve spawns a new island when one stagnates. Island slots take turns as above; node c
is an expansion of the island holding slot (c - 1) mod 5 when c was made. When an island's last S
expansions did not raise its best mean (a child improves it when it is settled and its mean is above the
island's best so far; the initial islands start from the root's mean), a new island takes its slot (its
turn and its place in the migration ring), numbered 5, 6, ... in order: it is seeded from the best
settled node of the other islands (highest mean, ties to the older; the root when none), which is its
member, and whose children made on its turn are its own. The stagnated island is retired: its nodes stay
in the tree (and for the final choice) but are no island's candidates and do not migrate. The first
expansion of a new island carries `island_spawn` in its decision (island, slot, seed, the retired island,
S, its best), and the loop writes it as an `island_spawn` event. Like migrations, spawns are a pure
function of the tree (node ids, parents, settled nodes, their means): recomputed from the whole tree at
each decision (a Python pass over the nodes: a decision takes ~23 ms at 10,000 nodes), so a resumed or replayed run sees
the same islands; an evaluation that settles late can move a spawn, as it can move a migration.

State: islands and migrations are a pure function of the tree (node ids,
parents, which nodes are settled, their means), kept in the tree's derived
cache and brought up to date from its change log: a new node gets its
parent's island; an evaluation of a node made before the last migration
recomputes the migrations it takes part in.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from search.decisions import Decision, FinalChoice
from search.final import epsilon_quantile
from search.generational import drawable_mask, generational_decide, sample_index, settled_mask, top_k
from search.stagnation import Spawn, best_of_others, settled_means
from search.tree import TreeStats, TreeView

WEIGHT_FLOOR = 0.001  # OpenEvolve: max(fitness, 0.001) in fitness-weighted sampling


RETIRED = -3  # the home of a node whose island stagnated and was replaced: no island's candidate


@dataclass
class IslandState:
    """Home islands and migrations for one tree, one island configuration and one stage key."""

    islands: int
    interval: int  # expansions between migrations: migration_interval x num_islands
    rate: float
    tree: TreeStats | _NoChanges
    watcher: object
    known: int = 0  # nodes with a home island
    home: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))  # -1: the root, every island
    epochs: list = field(default_factory=list)  # per migration: (migrant nodes, their target islands)
    count: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int32))  # [island, node] migrations
    recomputed: int = 0  # migrations computed so far (for tests and the benchmark)
    seeds: dict = field(default_factory=dict)  # slot -> the seed of the spawned island holding it
    spawns: list = field(default_factory=list)  # islands spawned on stagnation, in order (Spawn)
    holders: list = field(default_factory=list)  # slot -> the island holding it now (spawned: 5, 6, ...)
    feature_range: tuple = (np.inf, -np.inf)  # min, max of `feature` over valid nodes
    depth_range: tuple = (np.inf, -np.inf)  # min, max depth over valid nodes

    def grow(self, size: int) -> None:
        if len(self.home) >= size:
            return
        size = max(size, 2 * len(self.home), 1024)
        home = np.full(size, -2, dtype=np.int32)
        home[: len(self.home)] = self.home
        count = np.zeros((self.islands, size), dtype=np.int32)
        if self.count.size:
            count[:, : self.count.shape[1]] = self.count
        self.home, self.count = home, count

    def assign_homes(self, view: TreeView) -> None:
        """Home islands of nodes known..n-1: the root -1, a root child its turn, others their parent's;
        and the feature ranges, with the new valid nodes."""
        parent, n = view.parent, view.n
        if self.known >= n:
            return
        self.grow(n)
        new = np.arange(self.known, n)
        fresh = new[view.valid[new]]
        if len(fresh):
            f, d = view.feature[fresh], view.depth[fresh]
            self.feature_range = (
                min(self.feature_range[0], float(f.min())),
                max(self.feature_range[1], float(f.max())),
            )
            self.depth_range = (min(self.depth_range[0], float(d.min())), max(self.depth_range[1], float(d.max())))
        par = parent[new]
        home = self.home
        home[new[par < 0]] = -1
        root_child = par == 0
        home[new[root_child]] = (new[root_child] - 1) % self.islands
        pending = new[par > 0]
        while len(pending):  # parents before children: one vectorized pass per level among the new nodes
            ready = home[parent[pending]] != -2
            home[pending[ready]] = home[parent[pending[ready]]]
            pending = pending[~ready]
        self.known = n

    def boundary(self, k: int) -> int:
        """Nodes made before the k-th migration: ids < 1 + k x interval."""
        return 1 + k * self.interval

    def sync(self, view: TreeView, settled: np.ndarray, means: Means) -> None:
        """Bring homes and migrations up to date with the view."""
        self.assign_homes(view)
        due = (view.n - 1) // self.interval if self.islands > 1 else 0
        start = len(self.epochs) + 1
        changed = [x for x in self.tree.drain_changes(self.watcher) if x > 0]
        if changed:
            earliest = (min(changed) - 1) // self.interval + 1  # the first migration node x takes part in
            start = min(start, earliest)
        if start > due:
            return
        own = self.settled_own(settled, self.boundary(due))
        if due - start >= 8:  # many migrations (a first build): each island ranked once, best first
            own = [members[np.lexsort((members, -means[members]))] for members in own]
            for k in range(start, due + 1):
                self.migrate(k, own, means, ranked=True)
        else:
            for k in range(start, due + 1):
                self.migrate(k, own, means)

    def settled_own(self, settled: np.ndarray, end: int) -> list[np.ndarray]:
        """Per island, its settled own nodes with ids < end (the root excluded), in id order."""
        pool = np.flatnonzero(settled[1:end]) + 1
        homes = self.home[pool]
        return [pool[homes == island] for island in range(self.islands)]

    def migrate(self, k: int, own: list[np.ndarray], means: Means, ranked: bool = False) -> None:
        """(Re)compute the k-th migration: each island's top `rate` of its settled own nodes made before it.
        own: per island, those nodes in id order, or best first (ties to the older) when `ranked`."""
        if k <= len(self.epochs):
            old_nodes, old_targets = self.epochs[k - 1]
            self.count[old_targets, old_nodes] -= 1  # (target, node) pairs are distinct within a migration
        end = self.boundary(k)
        nodes, targets = [], []
        for island in range(self.islands):
            if ranked:
                before = np.flatnonzero(own[island] < end)
                if len(before) == 0:
                    continue
                top = own[island][before[: max(1, int(len(before) * self.rate))]]
            else:
                members = own[island][: int(np.searchsorted(own[island], end))]
                if len(members) == 0:
                    continue
                top = top_k(members, means[members], max(1, int(len(members) * self.rate)))
            for target in {(island + 1) % self.islands, (island - 1) % self.islands} - {island}:
                nodes.append(top)
                targets.append(np.full(len(top), target, dtype=np.int64))
        migrants = np.concatenate(nodes) if nodes else np.zeros(0, dtype=np.int64)
        where = np.concatenate(targets) if targets else np.zeros(0, dtype=np.int64)
        self.count[where, migrants] += 1
        if k <= len(self.epochs):
            self.epochs[k - 1] = (migrants, where)
        else:
            self.epochs.append((migrants, where))
        self.recomputed += 1

    def members(self, island: int, n: int) -> np.ndarray:
        """Boolean over nodes 0..n-1: home island, the root, or a migrant there (for the island now holding
        slot `island`: a spawned one has its seed instead of the root)."""
        seed = self.seeds.get(island)
        if seed is None:
            return (self.home[:n] == island) | (self.home[:n] == -1) | (self.count[island, :n] > 0)
        out = (self.home[:n] == island) | (self.count[island, :n] > 0)
        if seed < n:
            out[seed] = True
        return out

    def spawn_on_stagnation(self, view: TreeView, settled: np.ndarray, stagnation: int) -> None:
        """Homes again, in id order, with the islands spawned on stagnation (the module's docstring): each
        slot's island, its best mean and its expansions since it last improved, node by node."""
        n, parent, slots = view.n, view.parent, self.islands
        mean = settled_means(view, settled)
        home = self.home
        holder = list(range(slots))  # the island (its number) holding each slot
        best = [float(mean[0])] * slots
        since = [0] * slots
        for c in range(1, n):
            slot, p = (c - 1) % slots, int(parent[c])
            home[c] = slot if p == 0 or p == self.seeds.get(slot) else home[p]
            if mean[c] > best[slot]:
                best[slot], since[slot] = float(mean[c]), 0
                continue
            since[slot] += 1
            if since[slot] < stagnation:
                continue
            seed = best_of_others(home, mean, c, slot)
            island = slots + len(self.spawns)
            seed_island = holder[int(home[seed])] if seed else -1
            self.spawns.append(
                Spawn(c, slot, island, holder[slot], seed, seed_island, stagnation, best[slot], retires=True)
            )
            home[: c + 1][home[: c + 1] == slot] = RETIRED
            holder[slot], self.seeds[slot] = island, seed
            best[slot], since[slot] = float(mean[seed]), 0
        self.holders = holder


class _NoChanges:
    """The change log of a state made afresh from the whole tree: nothing to catch up on."""

    def drain_changes(self, watcher: object = None) -> list[int]:
        return []


_NO_CHANGES = _NoChanges()


class Means:
    """Mean dev scores, computed only for the nodes asked for (`TreeView.mean`): `means[nodes]`."""

    def __init__(self, view: TreeView) -> None:
        self.view = view

    def __getitem__(self, nodes: np.ndarray) -> np.ndarray:
        return self.view.mean(nodes)


def _bins(values: np.ndarray, lo: float, hi: float, bins: int) -> np.ndarray:
    if hi <= lo:
        return np.zeros(len(values), dtype=np.int64)
    return np.clip(((values - lo) / (hi - lo) * bins).astype(np.int64), 0, bins - 1)


@dataclass(frozen=True)
class OpenEvolvePolicy:
    name: str = "openevolve"
    num_islands: int = 5
    migration_interval: int = 50  # generations per island between migrations
    migration_rate: float = 0.1
    exploration_ratio: float = 0.2
    exploitation_ratio: float = 0.7
    feature_bins: int = 10
    epsilon: float = 0.1  # the final rule's quantile
    island_stagnation: int | None = None  # S: spawn a new island after S expansions without improvement

    def __post_init__(self) -> None:
        if self.num_islands < 1 or self.migration_interval < 1 or self.feature_bins < 1:
            raise ValueError("openevolve needs num_islands, migration_interval and feature_bins >= 1")
        if self.island_stagnation is not None and self.island_stagnation < 1:
            raise ValueError(f"island_stagnation must be 1 or more expansions, not {self.island_stagnation}")
        if not (
            0 <= self.exploration_ratio
            and 0 <= self.exploitation_ratio
            and self.exploration_ratio + self.exploitation_ratio <= 1
        ):
            raise ValueError("openevolve needs exploration_ratio + exploitation_ratio <= 1, both >= 0")

    # ----- state derived from the tree ---------------------------------------------------------
    def state(self, view: TreeView) -> tuple[IslandState, np.ndarray, Means]:
        """(the islands, settled mask, means) for this view, the islands brought up to date."""
        key = ("openevolve-islands", self.num_islands, self.migration_interval, self.migration_rate, view.stage_key)

        def make(tree: TreeStats) -> IslandState:
            tree.watch_changes(key)
            return IslandState(
                self.num_islands,
                self.migration_interval * self.num_islands,
                self.migration_rate,
                tree,
                key,
                count=np.zeros((self.num_islands, 0), dtype=np.int32),
            )

        settled = settled_mask(view)
        means = Means(view)
        if self.island_stagnation is not None:  # spawns may re-home any node: the whole state, afresh
            fresh = IslandState(
                self.num_islands,
                self.migration_interval * self.num_islands,
                self.migration_rate,
                _NO_CHANGES,
                None,
                count=np.zeros((self.num_islands, 0), dtype=np.int32),
            )
            fresh.assign_homes(view)
            fresh.spawn_on_stagnation(view, settled, self.island_stagnation)
            fresh.sync(view, settled, means)
            return fresh, settled, means
        state: IslandState = view.derived_cache(key, make)
        state.sync(view, settled, means)
        return state, settled, means

    def spawns(self, view: TreeView) -> list[Spawn]:
        """The islands spawned on stagnation so far, in order (none without `island_stagnation`)."""
        return list(self.state(view)[0].spawns)

    def turn(self, view: TreeView) -> int:
        """The island whose turn the next expansion is."""
        return (view.n - 1 + view.pending_expansions) % self.num_islands

    def island_of(self, view: TreeView) -> np.ndarray:
        """Each node's home island (-1: the root, in every island)."""
        state, _, _ = self.state(view)
        return state.home[: view.n].copy()

    def candidates(self, view: TreeView, island: int, state: IslandState) -> np.ndarray:
        """The island's parent candidates: its members that an asynchronous draw may take (drawable_mask: a
        member with instances in flight counts with its finished ones); migrations still rank settled nodes."""
        drawable = drawable_mask(view)
        nodes = np.flatnonzero(drawable & state.members(island, view.n))
        return nodes if len(nodes) else np.flatnonzero(drawable)  # an empty island: every candidate

    def elites(self, view: TreeView, nodes: np.ndarray, means: Means, state: IslandState) -> np.ndarray:
        """The MAP-Elites champions among `nodes` (id order): best mean per (feature bin, depth bin) cell,
        each feature min-max scaled over every valid node."""
        if len(nodes) == 0:
            return nodes
        b = self.feature_bins
        cell = _bins(view.feature[nodes], state.feature_range[0], state.feature_range[1], b) * b + _bins(
            view.depth[nodes].astype(np.float64), state.depth_range[0], state.depth_range[1], b
        )
        a = means[nodes]
        best = np.full(b * b, -np.inf)
        np.maximum.at(best, cell, a)
        top = a == best[cell]
        first = np.full(b * b, np.iinfo(np.int64).max)
        np.minimum.at(first, cell[top], nodes[top])
        return np.sort(first[first != np.iinfo(np.int64).max])

    # ----- the rule ----------------------------------------------------------------------------
    def island_probabilities(self, view: TreeView, island: int) -> np.ndarray:
        """Each node's probability of being the parent when it is `island`'s turn (over every node)."""
        state, _, means = self.state(view)
        out = np.zeros(view.n)
        nodes = self.candidates(view, island, state)
        if len(nodes) == 0:
            return out
        elites = self.elites(view, nodes, means, state)
        w = np.maximum(means[nodes], WEIGHT_FLOOR)
        weighted = 1.0 - self.exploration_ratio - self.exploitation_ratio
        out[nodes] += self.exploration_ratio / len(nodes) + weighted * w / w.sum()
        out[elites] += self.exploitation_ratio / len(elites)
        return out

    def probabilities(self, view: TreeView) -> np.ndarray:
        """Each node's probability of being the next parent (the island of the turn)."""
        return self.island_probabilities(view, self.turn(view))

    def parent(self, view: TreeView, rng: np.random.Generator) -> tuple[int, dict] | None:
        state, _, means = self.state(view)
        island = self.turn(view)
        nodes = self.candidates(view, island, state)
        if len(nodes) == 0:
            return None
        u = rng.random()
        if u < self.exploration_ratio:
            branch, pool = "explore: uniform over the island", nodes
            node = int(pool[int(rng.integers(len(pool)))])
        elif u < self.exploration_ratio + self.exploitation_ratio:
            pool = self.elites(view, nodes, means, state)
            branch = "exploit: uniform over the island's MAP-Elites champions"
            node = int(pool[int(rng.integers(len(pool)))])
        else:
            pool = nodes
            branch = "fitness-proportional over the island"
            node = int(pool[sample_index(np.maximum(means[nodes], WEIGHT_FLOOR), rng)])
        detail = {
            "rule": branch,
            "island": island,
            "u": float(u),
            "pool": len(pool),
            "island_candidates": len(nodes),
            "migrations": len(state.epochs),
            "a": view.mean(node),
        }
        if state.holders:
            detail["island_number"] = state.holders[island]
            spawn = next((x for x in reversed(state.spawns) if x.slot == island), None)
            # the new island's first expansion (its child is node n + pending): the loop writes it as an event
            if spawn is not None and view.n + view.pending_expansions - spawn.at <= self.num_islands:
                detail["island_spawn"] = spawn.record()
        return node, detail

    def decide(self, view: TreeView, rng: np.random.Generator) -> Decision | None:
        return generational_decide(view, rng, self.parent)

    def select_final(self, view: TreeView, rng: np.random.Generator) -> FinalChoice | None:
        return epsilon_quantile(view, self.epsilon)
