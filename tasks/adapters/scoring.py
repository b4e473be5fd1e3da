"""From an unbounded metric to a score in [0, 1], anchored on the seed.

The search's statistics are Beta posteriors, so a score must lie in [0, 1] and
move when the program gets better. A task folder's metric (OpenEvolve's
`combined_score`, a benchmark's printed figure, a grader's float) has no known
range, so it is mapped by a documented, order-keeping rule anchored on the
seed's own value m0 on the same instance (the seed is evaluated first):

- with a target T (`--target`, else the folder's PERFECT_SCORE) that lies
  beyond the seed in the better direction:
      score = clip(0.5 + 0.5 (m - m0) / (T - m0), 0, 1)
  the seed scores 0.5, the target 1, and as far below the seed as the target
  is above it, 0. The same formula serves both directions (for a metric where
  lower is better T < m0, and a lower m gives a higher score);
- without a target (or with one the seed already reaches):
      score = 0.5 + 0.5 tanh(d (m - m0) / s),  s = 0.1 |m0|  (0.1 when m0 = 0)
  with d = +1 when higher is better, -1 when lower is; a change of 10 % of the
  seed's value moves the score from 0.5 to 0.88 (or 0.12);
- without a seed value (the seed's own run failed), every valid answer
  scores 0.5: there is nothing to compare it to.

Both maps are monotone in m (non-decreasing when higher is better,
non-increasing otherwise) and give exactly 0.5 at m = m0; the raw metric is
kept in `evaluations.metrics` for reports.
"""

from __future__ import annotations

import math

SCALE = 0.1  # the no-target rule's scale, as a fraction of the seed's value
ZERO_SCALE = 0.1  # its scale when the seed's value is exactly 0


def anchored_score(m: float, m0: float | None, higher_is_better: bool = True, target: float | None = None) -> float:
    """The score of metric value `m` given the seed's value `m0` (see the module's docstring)."""
    if m0 is None or not math.isfinite(m0):
        return 0.5
    if m == m0:
        return 0.5
    d = 1.0 if higher_is_better else -1.0
    if target is not None and math.isfinite(target) and d * (target - m0) > 0:
        return min(1.0, max(0.0, 0.5 + 0.5 * (m - m0) / (target - m0)))
    scale = SCALE * abs(m0) or ZERO_SCALE  # a seed's value of 0 (or so small that a tenth of it is 0)
    return 0.5 + 0.5 * math.tanh(d * (m - m0) / scale)
