"""The offline mutator makes real progress on online bin packing (see offline_progress.py).

Full report across seeds: python tests/engine/mutators/offline_progress.py --seeds 5 --proposals 1000
"""

from __future__ import annotations

import numpy as np
import pytest
from offline_progress import (
    BEST_FIT,
    FIRST_FIT,
    MULTI,
    SEED_AGENT,
    chain,
    evaluate_source,
    search,
)

from engine.mutators import OfflineMutator


def test_references() -> None:
    assert BEST_FIT < FIRST_FIT  # best fit saves bins on these instances


def test_search_beats_first_fit() -> None:
    result = search(seed=0, proposals=300, time_limit_s=0.0)  # stop once it beats first fit: what is asserted
    print(
        f"\nfirst fit {FIRST_FIT:.3f}, best fit {BEST_FIT:.3f}; beat first fit at proposal "
        f"{result.beat_first_fit}, reached best fit at {result.reached_best_fit}, beat best fit at "
        f"{result.beat_best_fit}; best {result.best:.3f} after {result.proposals} proposals"
    )
    assert result.beat_first_fit is not None and result.beat_first_fit <= 300
    assert result.best < FIRST_FIT


@pytest.mark.slow
def test_children_run_cleanly() -> None:
    """Most statically valid children also run: numeric output of the right shape, no numpy errors."""
    proposals, _ = chain(OfflineMutator(), [SEED_AGENT.read_text(), MULTI], 60, seed=3)
    sources = [p.files["agent.py"] for p in proposals if p is not None]
    statuses = [evaluate_source(s)[1] for s in sources]
    errors = statuses.count("error")
    print(f"\nruntime errors: {errors}/{len(sources)}; statuses {sorted(set(statuses))}")
    assert errors <= 0.1 * len(sources)
    assert np.isfinite(FIRST_FIT)
