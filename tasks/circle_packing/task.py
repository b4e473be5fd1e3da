"""Circle packing (AlphaEvolve, Novikov et al. 2025, appendix B.12) as a Clade task.

Pack 26 circles into the unit square so that the sum of their radii is as
large as possible. The agent is `agent.py` with `construct() -> (centers,
radii)`; the runner calls it inside the sandbox and writes the packing to
`answer.json`; outside, `geometry.check_packing` checks it (26 circles,
finite numbers, radii >= 0, every circle inside the square and no two
overlapping, both up to an absolute tolerance of 1e-9) and sums the radii.

Score. The best packings known sum to about 2.635 (AlphaEvolve 2.635,
ShinkaEvolve 2.63598, OpenEvolve 2.634), so the score is absolute, not
measured against the seed: score = min(sum / 2.636, 1). An invalid packing
scores 0 (the engine's rule for an answer that does not pass the grader).

One instance. The task has a single problem, `unit_square_26`, in the dev
split: the seed is evaluated on it first and every child once, so with HGM a
node is evaluated once and the scheduler expands whenever nothing is left to
evaluate. The holdout split holds the same problem again
(`unit_square_26_rerun`): the final node and the seed are run once more at
the end, which measures the chosen packing afresh (a program using
randomness may have been lucky on its one dev run; a deterministic one gives
the same figure).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from engine.sandbox.base import SandboxLimits
from tasks.base import Grade, Instance, Task
from tasks.binpack.instances import InstanceFileError
from tasks.circle_packing.geometry import TOL, check_packing

HERE = Path(__file__).resolve().parent
SEED_DIR = HERE.parents[1] / "agents_seed" / "circle_packing"
N_CIRCLES = 26
BEST_KNOWN = 2.636  # the score's denominator: a packing at the best known sum scores 1

DESCRIPTION = f"""\
Circle packing. Place {N_CIRCLES} circles inside the unit square [0, 1] x [0, 1], with no two overlapping,
so that the sum of their radii is as large as possible. `construct()` takes no argument and returns
(centers, radii): {N_CIRCLES} (x, y) centres and {N_CIRCLES} radii (numpy arrays or lists). The evaluator
checks, up to an absolute tolerance of {TOL:g}, that every circle lies inside the square and that the
distance between any two centres is at least the sum of their radii; radii must be finite and >= 0. An
invalid packing scores 0; a valid one scores sum of radii / {BEST_KNOWN} (capped at 1). The best packings
known sum to about 2.635. The program must finish within the time limit (20 s)."""


class CirclePackingTask(Task):
    name = "circle_packing"
    description = DESCRIPTION
    entry_file = "agent.py"
    entry_function = "construct"
    entry_args: tuple[str, ...] = ()
    answer_file = "answer.json"
    raw_metric = "sum of radii"
    raw_metric_note = f"sum of radii of the {N_CIRCLES} circles, higher is better (best known about 2.635)"
    score_note = f"scores are sum / {BEST_KNOWN}, capped at 1: absolute, not measured against the seed"
    limits = SandboxLimits(timeout_s=20.0, cpu_s=20, memory_mb=1024, file_size_mb=16, processes=64)

    def __init__(self, instances_path: str | None = None) -> None:
        if instances_path:
            raise InstanceFileError(
                "circle_packing has one built-in problem (26 circles in the unit square); "
                "--instances does not apply to it"
            )

    def seed_files(self) -> dict[str, str]:
        return {self.entry_file: (SEED_DIR / "agent.py").read_text()}

    def reference_agents(self) -> dict[str, dict[str, str]]:
        return {"grid": {self.entry_file: (SEED_DIR / "grid.py").read_text()}}

    def instances(self) -> list[Instance]:
        data = {"n": N_CIRCLES}
        return [Instance("unit_square_26", "dev", data), Instance("unit_square_26_rerun", "holdout", data)]

    def sandbox_files(self, instance: Instance) -> dict[str, bytes]:
        return {"runner.py": (HERE / "runner.py").read_bytes()}

    def command(self) -> Sequence[str]:
        return [self.python or sys.executable, "runner.py"]

    def grade(self, instance: Instance, answer: bytes) -> Grade:
        n = int(instance.data.get("n", N_CIRCLES))
        try:
            packing = json.loads(answer)
        except (ValueError, UnicodeDecodeError):
            return Grade(False, {}, "answer.json is not JSON")
        if not isinstance(packing, dict) or not {"centers", "radii"} <= set(packing):
            return Grade(False, {}, "answer must be an object with centers and radii")
        verdict = check_packing(packing["centers"], packing["radii"], n)
        if not verdict.valid:
            return Grade(False, {}, verdict.reason)
        return Grade(
            True,
            {"sum_radii": verdict.sum_radii, "n": n},
            f"valid packing of {n} circles, sum of radii {verdict.sum_radii:.6f}",
        )

    def score(self, instance: Instance, metrics: Mapping, reference: Mapping | None) -> float:
        """Absolute: sum / 2.636, capped at 1; the seed's result (`reference`) does not enter."""
        return min(float(metrics["sum_radii"]) / BEST_KNOWN, 1.0)

    def raw_value(self, metrics: Sequence[Mapping]) -> float | None:
        """Mean sum of radii over the evaluations given."""
        values = [float(m["sum_radii"]) for m in metrics if "sum_radii" in m]
        return sum(values) / len(values) if values else None
