"""Islands spawned on stagnation for the shinka policies (`shinka`, `shinka_power_law`; `island_stagnation` = S).

ShinkaEvolve (SakanaAI/ShinkaEvolve) keeps islands without migration and spawns a new island when the
search stagnates. The shinka policies here start with one island, as before (search/shinka.py); with S set:
- the islands take turns, one expansion each, in a fixed rotation that starts with the newest island: node
  c is an expansion of the island whose turn made it;
- an island stagnates when its last S expansions did not raise its best mean (a child raises it when it is
  settled with a mean above the island's best so far; island 0 starts from the root's mean);
- a new island then joins the turns, seeded from the best settled node of the other islands (highest mean,
  ties to the older), or from the root while there is no other island (the first spawn); the stagnated
  island goes on (ShinkaEvolve keeps its islands);
- an island's members: the nodes made under it (a child of the root or of the island's seed made on its
  turn is the island's; any other child is its parent's island), its seed, and for island 0 the root. The
  policy's rule (weighted or power law) runs over the archive of the island of the turn (its settled
  members, the `archive_size` best); an island with no settled member draws from every island.
Like the openevolve policy's islands, a pure function of the tree (node ids, parents, settled nodes, their
means), computed from the whole tree at each decision.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from search.stagnation import Spawn, best_of_others, settled_means
from search.tree import TreeView


@dataclass(frozen=True)
class ShinkaIslands:
    home: np.ndarray  # each node's island (-1: the root, island 0's)
    seeds: tuple[int, ...]  # each island's seed (island 0: the root)
    spawns: tuple[Spawn, ...]

    def turn(self, child: int) -> int:
        """The island whose turn makes node `child` (ids past the tree: expansions yet to be stored)."""
        k, base = 1, 0
        for spawn in self.spawns:
            if spawn.at < child:
                k, base = spawn.island + 1, spawn.at
        return (k - 1 + child - 1 - base) % k

    def members(self, island: int) -> np.ndarray:
        out = self.home == island
        if island == 0:
            out |= self.home == -1
        out[self.seeds[island]] = True
        return out


def shinka_islands(view: TreeView, settled: np.ndarray, stagnation: int) -> ShinkaIslands:
    """The islands of the tree in `view` (the module's docstring), node by node in id order."""
    n, parent = view.n, view.parent
    mean = settled_means(view, settled)
    home = np.full(n, -1, dtype=np.int64)
    seeds: list[int] = [0]
    best = [float(mean[0])] if n else [-np.inf]
    since = [0]
    spawns: list[Spawn] = []
    k, base = 1, 0
    for c in range(1, n):
        island = (k - 1 + c - 1 - base) % k
        p = int(parent[c])
        home[c] = island if p == 0 or p == seeds[island] else home[p]
        if mean[c] > best[island]:
            best[island], since[island] = float(mean[c]), 0
            continue
        since[island] += 1
        if since[island] < stagnation:
            continue
        seed = best_of_others(home, mean, c, island) if k > 1 else 0
        seed_island = int(home[seed]) if seed else -1
        spawns.append(Spawn(c, k, k, island, seed, seed_island, stagnation, best[island], retires=False))
        seeds.append(seed)
        best.append(float(mean[seed]))
        since.append(0)
        since[island] = 0  # the stagnated island goes on, counted afresh
        k, base = k + 1, c
    return ShinkaIslands(home, tuple(seeds), tuple(spawns))
