"""Noisy one-instance tasks: the noise estimate, repeats of the best candidates, and a final choice from them.

With one dev instance a node has one score, and when the program (or its
evaluator) is stochastic that score is one draw: OpenEvolve's
function_minimization seed scores 0.75, 0.92, 0.91, 0.77 and 0.77 in five runs
of its evaluator. Taking the highest single score as the final node picks the
luckiest draw (the winner's curse), not the best program. So, when the noise
probe (search.evidence) finds the seed's two runs differ:

- Noise. The probe's two runs of the seed, and every later repeat, give
  the estimate: v is the pooled within-node sample variance,
  sum_i sum_j (x_ij - mean_i)^2 / sum_i (n_i - 1) over the nodes run more
  than once (the standard pooled estimator of a common variance; with the
  seed's two runs alone it is the probe's (x0 - x1)^2 / 2).
- Repeats. The last REMEASURE_SHARE of the budget (at least MIN_REMEASURE
  evaluations) re-runs candidates instead of growing the tree: among the
  TOP_K nodes by mean over their runs, the one with the highest
  mean + sqrt(v / n) (n its runs, those in flight included), the upper
  confidence bound of best-arm identification (LUCB's idea, Kalyanakrishnan
  et al., ICML 2012: measure where the leader is least certain). A lucky
  single run is re-measured first and falls back to its level; a good one
  stays and is measured again.
- Final choice. The highest mean over its runs among the nodes run at
  least twice: the seed and the re-measured candidates. This is the
  recommendation rule of fixed-budget best-arm identification (the
  empirical best among the arms sampled, as in Audibert and Bubeck's
  UCB-E and successive rejects, COLT 2010), restricted to arms with a
  second, independent run: a single run that won by luck cannot be chosen
  on that run alone. Measured and rejected: HGM's epsilon-quantile
  (0.1) of N(mean, v / n), which made the final node the seed in 9 of 10
  noisy-sine runs, its four probe runs making it look surest, while the
  children chosen before this module were truly better in 7 of 10
  (README, noisy one-instance tasks).
Deterministic programs (v = 0) get none of this: a repeat would measure the
same number again. Sizes: measured on two noisy tasks (README, noisy
one-instance tasks), more repeats (4 seed runs, a tenth of the budget,
racing the leader to 3 runs) cost children and bought no better final
node, so the repeats are few: the probe's 2 runs and a twentieth of the
budget (at least 2) at the end.

`runs` maps a node to its dev scores on the task's one instance (first run
and repeats), valid nodes only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from search.decisions import FinalChoice

PROBE_RUNS = 2  # the seed's runs on a one-instance task (more bought nothing measurable: README, noisy tasks)
REMEASURE_SHARE = 0.05
MIN_REMEASURE = 2
TOP_K = 4


def pooled_variance(runs: Mapping[int, Sequence[float]]) -> float | None:
    """The pooled within-node sample variance of the nodes run twice or more; None when none was."""
    squares, dof = 0.0, 0
    for scores in runs.values():
        if len(scores) < 2:
            continue
        dof += len(scores) - 1
        if max(scores) == min(scores):
            continue  # exactly 0, not a rounding error that would call a deterministic program noisy
        mean = sum(scores) / len(scores)
        squares += sum((x - mean) ** 2 for x in scores)
    return squares / dof if dof else None


def remeasure_reserve(budget: int) -> int:
    """Dev evaluations kept for repeats at the end of a noisy one-instance run."""
    return max(MIN_REMEASURE, round(REMEASURE_SHARE * budget))


def _means(runs: Mapping[int, Sequence[float]]) -> dict[int, tuple[float, int]]:
    return {node: (sum(s) / len(s), len(s)) for node, s in runs.items() if s}


def pick_repeat(
    runs: Mapping[int, Sequence[float]],
    noise_var: float,
    in_flight: Mapping[int, int] | None = None,
    top_k: int = TOP_K,
) -> int | None:
    """The node to run again: the highest mean + sqrt(v / n) among the top_k means (ties: the older node)."""
    means = _means(runs)
    if not means:
        return None
    flying = in_flight or {}
    top = sorted(means, key=lambda node: (-means[node][0], node))[:top_k]

    def bound(node: int) -> float:
        mean, n = means[node]
        return mean + math.sqrt(noise_var / (n + flying.get(node, 0)))

    return max(top, key=lambda node: (bound(node), -node))


def remeasured_final(runs: Mapping[int, Sequence[float]], noise_var: float) -> FinalChoice | None:
    """The highest mean among the nodes run at least twice (ties: the older node); every node when none was."""
    means = _means(runs)
    if not means:
        return None
    measured = [node for node, (_, n) in means.items() if n > 1] or list(means)
    node = max(measured, key=lambda k: (means[k][0], -k))
    mean, n = means[node]
    return FinalChoice(
        node_id=node,
        rule=f"highest mean over each re-measured node's runs (noisy one-instance task, v = {noise_var:.3g})",
        detail={"mean": mean, "runs": n, "noise_var": noise_var, "remeasured": len(measured), "candidates": len(means)},
    )
