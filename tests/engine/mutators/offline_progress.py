"""Does the offline mutator make progress on online bin packing? A test-only search harness.

Candidates are evaluated in this process with `tasks.binpack.packing.pack_online`
(acceptable here: the code is our own mutator's output, and this module is
never used by the engine). Six fixed instances: three OR-style (uniform
integer sizes 20..100, capacity 150, 500 items) and three Weibull (45 *
Weibull(3) rounded and clipped to 1..100, capacity 100, 1000 items). The
search is a steady-state GA: tournament selection (size 3) from an elite
population, one child per step, the two best other members as crossover
donors.

It also holds helpers the mutator tests share (`chain`, `MULTI`).

Report across seeds (proposals to beat first fit, to reach best fit, best
mean bins):

    python tests/engine/mutators/offline_progress.py --seeds 5 --proposals 1000
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine.mutators import (
    MutationContext,
    MutationError,
    OfflineMutator,
    Proposal,
    check_child,
    operators_in,
)
from tasks.binpack.packing import best_fit, first_fit, pack_online

ENTRY = ("agent.py", "priority", ("item", "bins"))
SEED_AGENT = ROOT / "agents_seed" / "binpack" / "agent.py"


# a parent with several statements, so that the statement operators have something to act on
MULTI = '''"""A multi-statement priority."""
import numpy as np


def priority(item, bins):
    """Room left, with a bonus for an exact fit."""
    room = bins - item
    score = -1.0 * room
    score = score + 0.5 * (room == 0)
    score = score * 2.0
    return score
'''


def chain(mutator: OfflineMutator, starts: list[str], n: int, seed: int) -> tuple[list[Proposal | None], list[str]]:
    """n proposals, each from a random earlier valid child (or a start), with two random donors."""
    rng = np.random.default_rng(seed)
    pool = [{"agent.py": s} for s in starts]
    out: list[Proposal | None] = []
    for _ in range(n):
        parent = pool[int(rng.integers(len(pool)))]
        donors = tuple(pool[int(i)] for i in rng.integers(len(pool), size=2))
        try:
            proposal = mutator.propose(parent, MutationContext(*ENTRY, donors=donors), rng)
        except MutationError:
            out.append(None)
            continue
        out.append(proposal)
        if check_child(proposal.files, *ENTRY) is None:
            pool.append(proposal.files)
    return out, [f["agent.py"] for f in pool]


def instances() -> list[tuple[float, np.ndarray]]:
    out = []
    for seed in (11, 12, 13):
        rng = np.random.default_rng(seed)
        out.append((150.0, rng.integers(20, 101, size=500).astype(float)))
    for seed in (21, 22, 23):
        rng = np.random.default_rng(seed)
        out.append((100.0, np.clip(np.round(rng.weibull(3.0, size=1000) * 45), 1, 100)))
    return out


INSTANCES = instances()


def _checked(priority: Callable) -> Callable:
    def checked(item: float, bins: np.ndarray) -> np.ndarray:
        out = np.asarray(priority(item, bins), dtype=float)
        if out.shape not in ((), bins.shape) or not np.isfinite(out).all():
            raise ValueError("bad priority output")
        return out

    return checked


def per_instance_bins(priority: Callable, cutoff: list[int] | None = None) -> list[int] | None:
    """Bins used on each instance; raises on a bad priority (error, wrong shape, non-finite).
    With `cutoff`, stops early (returns None) once an instance needs more bins than its cutoff."""
    out = []
    with np.errstate(divide="raise", over="raise", invalid="raise", under="ignore"):
        for i, (cap, items) in enumerate(INSTANCES):
            out.append(len(np.unique(pack_online(_checked(priority), cap, items))))
            if cutoff is not None and out[-1] > cutoff[i]:
                return None
    return out


def bins_used(priority: Callable) -> float:
    """Mean number of bins over the six instances."""
    return float(np.mean(per_instance_bins(priority)))


FIRST_FIT_BINS = per_instance_bins(first_fit)
FIRST_FIT = float(np.mean(FIRST_FIT_BINS))
BEST_FIT = bins_used(best_fit)
SLACK = 3  # a candidate worse than first fit by more than this on an instance is not worth finishing


def evaluate_source(source: str) -> tuple[float | None, str]:
    """(mean bins, "ok") for an agent's source; (None, "error") when it fails to load or run;
    (None, "poor") when it is clearly worse than first fit (evaluation stopped early)."""
    namespace: dict = {"__name__": "candidate"}
    try:
        exec(compile(source, "agent.py", "exec"), namespace)  # noqa: S102 - test-only, our own mutants
        bins = per_instance_bins(namespace["priority"], [b + SLACK for b in FIRST_FIT_BINS])
    except Exception:  # noqa: BLE001 - any failure rejects the candidate
        return None, "error"
    return (None, "poor") if bins is None else (float(np.mean(bins)), "ok")


@dataclass
class SearchResult:
    seed: int
    proposals: int
    best: float
    best_source: str
    beat_first_fit: int | None = None  # proposal number when a child first beat first fit
    reached_best_fit: int | None = None  # ... first matched or beat best fit
    beat_best_fit: int | None = None  # ... first strictly beat best fit
    invalid: int = 0  # MutationError or check_child rejection
    runtime_errors: int = 0  # valid per check_child but failed when run
    operators: dict[str, int] = field(default_factory=dict)


def search(
    seed: int,
    proposals: int,
    mutator: OfflineMutator | None = None,
    population: int = 16,
    time_limit_s: float | None = None,
) -> SearchResult:
    """Up to `proposals` proposals; with `time_limit_s`, also stop once that much time has passed
    and first fit has been beaten (so a test can bound its run without changing what it asserts)."""
    mutator = mutator or OfflineMutator()
    rng = np.random.default_rng(seed)
    seed_files = {ENTRY[0]: SEED_AGENT.read_text()}
    pop: list[tuple[float, int, dict[str, str]]] = [(FIRST_FIT, 0, seed_files)]
    seen = {seed_files[ENTRY[0]]}
    result = SearchResult(seed, 0, FIRST_FIT, seed_files[ENTRY[0]])
    start = time.monotonic()
    for t in range(1, proposals + 1):
        if time_limit_s is not None and result.beat_first_fit and time.monotonic() - start > time_limit_s:
            break
        result.proposals = t
        picks = rng.integers(len(pop), size=min(3, len(pop)))
        parent = min((pop[int(i)] for i in picks), key=lambda p: (p[0], -p[1]))
        donors = tuple(p[2] for p in pop if p is not parent)[:2]
        try:
            proposal = mutator.propose(parent[2], MutationContext(*ENTRY, donors=donors), rng)
        except MutationError:
            result.invalid += 1
            continue
        for name in operators_in(proposal.description):
            result.operators[name] = result.operators.get(name, 0) + 1
        if check_child(proposal.files, *ENTRY) is not None:
            result.invalid += 1
            continue
        source = proposal.files[ENTRY[0]]
        if source in seen:
            continue
        seen.add(source)
        score, status = evaluate_source(source)
        if score is None:
            result.runtime_errors += status == "error"
            continue
        pop.append((score, t, proposal.files))
        pop.sort(key=lambda p: (p[0], -p[1]))  # best first; among equals the newest (neutral drift)
        del pop[population:]
        if score < result.best:
            result.best, result.best_source = score, source
        if score < FIRST_FIT and result.beat_first_fit is None:
            result.beat_first_fit = t
        if score <= BEST_FIT and result.reached_best_fit is None:
            result.reached_best_fit = t
        if score < BEST_FIT and result.beat_best_fit is None:
            result.beat_best_fit = t
    return result


def _report(seed: int, proposals: int) -> tuple[SearchResult, float]:
    start = time.time()
    return search(seed, proposals), time.time() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--proposals", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=1, help="seeds run in parallel processes")
    parser.add_argument("--show-best", action="store_true")
    args = parser.parse_args(argv)
    print(f"first fit {FIRST_FIT:.3f} bins, best fit {BEST_FIT:.3f} bins (mean of 6 instances)")
    jobs = [(seed, args.proposals) for seed in range(args.seeds)]
    if args.jobs > 1:
        from multiprocessing import Pool

        with Pool(args.jobs) as pool:
            results = pool.starmap(_report, jobs)
    else:
        results = [_report(*job) for job in jobs]
    for r, seconds in results:
        print(
            f"seed {r.seed}: beat first fit at {r.beat_first_fit}, reached best fit at {r.reached_best_fit}, "
            f"beat best fit at {r.beat_best_fit}; best {r.best:.3f} bins after {r.proposals} proposals "
            f"(invalid {r.invalid}, runtime errors {r.runtime_errors}, {seconds:.0f} s)"
        )
        if args.show_best:
            print(r.best_source.split('"""')[-1].strip())
            print(dict(sorted(r.operators.items())))
    beats = sum(r.beat_best_fit is not None for r, _ in results)
    print(
        f"beat first fit on {sum(r.beat_first_fit is not None for r, _ in results)}/{len(results)} seeds, "
        f"beat best fit on {beats}/{len(results)}"
    )


if __name__ == "__main__":
    main()
