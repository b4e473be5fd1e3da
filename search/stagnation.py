"""An island spawned because another stagnated (ShinkaEvolve's islands on stagnation), as the island
policies record it: search/openevolve.py (the new island takes the stagnated one's turn) and
search/shinka_islands.py (the new island joins the turns)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Spawn:
    """After node `at`, island `island` was seeded from node `seed` because island `stagnated` made
    `expansions` expansions without raising its best mean (`best`)."""

    at: int  # the stagnated island's last expansion (the S-th without improvement)
    slot: int  # the turn the new island plays (openevolve: the stagnated island's; shinka: a new one)
    island: int  # the new island's number
    stagnated: int  # the island that stagnated
    seed: int  # the node the new island starts from
    seed_island: int  # the island the seed was the best of (-1: the root)
    expansions: int  # S
    best: float  # the stagnated island's best mean
    retires: bool  # openevolve: the stagnated island is retired; shinka: it goes on

    def record(self) -> dict:
        """What the `island_spawn` event holds, with the reason in words."""
        where = f"the best of island {self.seed_island}" if self.seed_island >= 0 else "the root"
        best = f"{self.best:.4g}" if np.isfinite(self.best) else "none settled"
        then = "takes its turn" if self.retires else "joins the turns"
        return {
            "island": self.island,
            "slot": self.slot,
            "stagnated": self.stagnated,
            "retired": self.retires,
            "seed": self.seed,
            "seed_island": self.seed_island,
            "after_node": self.at,
            "expansions_without_improvement": self.expansions,
            "best": float(self.best) if np.isfinite(self.best) else None,
            "reason": f"island {self.stagnated} made {self.expansions} expansions without improving its best "
            f"({best}); island {self.island} {then}, seeded from node {self.seed} ({where})",
        }


def settled_means(view, settled: np.ndarray) -> np.ndarray:
    """Each node's mean dev score when it is settled, else -inf (not yet a candidate, nor an improvement)."""
    nodes = np.arange(view.n)
    return np.where(settled[: view.n] & (view.n_evals[: view.n] > 0), view.mean(nodes), -np.inf)


def best_of_others(home: np.ndarray, mean: np.ndarray, upto: int, stagnated: int) -> int:
    """The seed of a new island: the best settled node (ties to the older) among nodes 0..upto whose island
    is another than `stagnated`; the root (0) when there is none."""
    homes, means = home[: upto + 1], mean[: upto + 1]
    others = np.flatnonzero((homes >= 0) & (homes != stagnated) & np.isfinite(means))
    return int(others[int(np.argmax(means[others]))]) if len(others) else 0
