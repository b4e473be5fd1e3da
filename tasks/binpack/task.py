"""Online bin packing (FunSearch, Romera-Paredes et al., Nature 2024) as a Clade task.

The agent is `agent.py` with `priority(item, bins) -> np.ndarray`. The runner
packs each item into the feasible bin of highest priority; the evaluator,
outside the sandbox, checks that every item is placed exactly once and no bin
overflows, then counts bins.

Score. The search's Beta statistics need a score that moves across [0, 1]
when an agent gets better in a way that matters. Instances differ among
themselves by several percent of excess, more than first fit and best fit
differ (0.37 % on OR3), so each instance is scored against the seed on the
same instance: saved = reference bins - bins, score = 0.5 + 0.5 tanh(saved / 2).
The seed scores 0.5; one bin saved gives 0.73, two 0.88; one lost 0.27.
The reference is the seed's own result (evaluated on every dev instance
first); where the seed failed, first fit computed here stands in.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from engine.sandbox.base import SandboxLimits
from tasks.base import Grade, Instance, Task
from tasks.binpack import instances as instance_sets
from tasks.binpack.packing import first_fit, lower_bound, pack_online

HERE = Path(__file__).resolve().parent
SEED_DIR = HERE.parents[1] / "agents_seed" / "binpack"

DESCRIPTION = """\
Online bin packing. Items arrive one at a time and must be placed at once into
a bin; bins have a fixed capacity. For each item the runner calls
`priority(item, bins)`, where `bins` holds the remaining capacity of every bin
the item fits in (unopened bins are at full capacity), and puts the item into
the bin with the highest priority (ties: the first). Fewer bins is better.
Instances: uniform integer sizes 20..100 with capacity 150, and Weibull(3, 45)
sizes with capacity 100. Return a numpy array of one priority per bin."""


def score_saved(saved: float) -> float:
    """The documented monotone mapping of bins saved against the reference to [0, 1]."""
    return 0.5 + 0.5 * math.tanh(saved / 2.0)


@lru_cache(maxsize=4096)
def _first_fit_bins(capacity: float, items: tuple[float, ...]) -> int:
    return len(set(pack_online(first_fit, capacity, np.asarray(items)).tolist()))


class BinPackTask(Task):
    name = "binpack"
    description = DESCRIPTION
    entry_file = "agent.py"
    entry_function = "priority"
    entry_args: tuple[str, ...] = ("item", "bins")
    answer_file = "answer.json"
    raw_metric = "excess %"
    raw_metric_note = "excess % = bins / L1 - 1, mean over instances; lower is better"
    limits = SandboxLimits(timeout_s=20.0, cpu_s=20, memory_mb=1024, file_size_mb=16, processes=64)

    def __init__(
        self,
        instances_path: str | None = None,
        instance_seed: int = 0,
        dev_per_family: int = 8,
        holdout_per_family: int = 8,
    ) -> None:
        self.instances_path = instances_path
        self.instance_seed = instance_seed
        self.per_family = {"dev": dev_per_family, "holdout": holdout_per_family}

    def seed_files(self) -> dict[str, str]:
        return {self.entry_file: (SEED_DIR / "agent.py").read_text()}

    def reference_agents(self) -> dict[str, dict[str, str]]:
        return {"best_fit": {self.entry_file: (SEED_DIR / "best_fit.py").read_text()}}

    def instances(self) -> list[Instance]:
        if self.instances_path:
            return instance_sets.load(self.instances_path)
        return instance_sets.generate(self.instance_seed, self.per_family)

    def sandbox_files(self, instance: Instance) -> dict[str, bytes]:
        return {
            "runner.py": (HERE / "runner.py").read_bytes(),
            "clade_packing.py": (HERE / "packing.py").read_bytes(),
            "instance.json": json.dumps(instance.data).encode(),
        }

    def command(self) -> Sequence[str]:
        return [self.python or sys.executable, "runner.py"]

    def grade(self, instance: Instance, answer: bytes) -> Grade:
        capacity = float(instance.data["capacity"])
        items = np.asarray(instance.data["items"], dtype=float)
        try:
            chosen = json.loads(answer)
        except (ValueError, UnicodeDecodeError):
            return Grade(False, {}, "answer.json is not JSON")
        if not isinstance(chosen, list) or len(chosen) != len(items):
            return Grade(False, {}, f"answer must list one bin per item ({len(items)} items)")
        if not all(isinstance(b, int) and not isinstance(b, bool) and 0 <= b < len(items) for b in chosen):
            return Grade(False, {}, "every bin must be an integer index in [0, number of items)")
        loads = np.bincount(np.asarray(chosen, dtype=np.int64), weights=items, minlength=len(items))
        if np.any(loads > capacity + 1e-9):
            worst = int(np.argmax(loads))
            return Grade(False, {}, f"bin {worst} holds {loads[worst]:g}, over capacity {capacity:g}")
        bins = int(np.count_nonzero(loads))
        l1 = lower_bound(capacity, items)
        excess = bins / l1 - 1.0
        return Grade(
            True, {"bins": bins, "l1": l1, "excess": excess}, f"{bins} bins, L1 {l1}, excess {100 * excess:.2f}%"
        )

    def score(self, instance: Instance, metrics: Mapping, reference: Mapping | None) -> float:
        if reference is None or "bins" not in reference:
            ref_bins = _first_fit_bins(float(instance.data["capacity"]), tuple(instance.data["items"]))
        else:
            ref_bins = int(reference["bins"])
        return score_saved(ref_bins - int(metrics["bins"]))

    def raw_value(self, metrics: Sequence[Mapping]) -> float | None:
        """Mean excess over L1, in percent, over the instances given."""
        values = [m["excess"] for m in metrics if "excess" in m]
        return 100.0 * float(np.mean(values)) if values else None
