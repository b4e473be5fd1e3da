"""Online bin packing with the agent's heuristic in C++: the built-in task that is not Python (issue 17).

FunSearch's benchmark (Romera-Paredes et al., "Mathematical discoveries from
program search with large language models", Nature 2024), as `tasks.binpack`
runs it, except that the agent is a whole C++ program, `agent.cpp`: a fixed
main() outside its EVOLVE-BLOCK reads the instance from stdin and packs items
online into the open bin of highest `priority(item, remaining)` (a double;
ties go to the lowest index), opening a new bin when no open bin fits; only
`priority` inside the block may change. One departure from FunSearch and
`tasks.binpack`: an empty bin is not a candidate while an open bin fits the
item (there, unopened bins are scored too, and a priority that prefers them
opens a bin per item); for first fit and best fit both rules place every
item alike.

Build and run. The sandbox runner (`runner.py`) compiles the program with
`g++ -O2` under a build limit (`build_s`, 30 s) and then runs it under a run
limit of its own (`run_s`, 10 s); the sandbox's wall and CPU limits cover
both plus a margin. A build that fails or takes too long, and a run that
fails or takes too long, end as a failed evaluation whose feedback is the
runner's message (for a failed build, g++'s first error lines).

Instances, grading and score are `tasks.binpack`'s: the evaluator, outside
the sandbox, checks that every item has a bin index and no bin is over
capacity, counts bins; the score is against the seed on the same instance
(0.5 + 0.5 tanh(saved / 2)). The instances are binpack's own generated ones,
fewer of them because every evaluation compiles the program (about half a
second): the first 2 of each family of binpack's dev set and the first 4 of
each family of its holdout set, so the figures compare with binpack's.
`--instances` takes the same JSON as binpack's (e.g. FunSearch's OR3 file).

The seed is best fit spoiled by a term that shuns nearly full bins
(+4 sqrt(room)): on the dev instances it uses 1 to 9 bins more than best fit
per instance, and the offline mutator's steps (the constant 4.0 shrunk, the
`+` swapped, `-1.0` grown) lead back towards best fit.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from engine.errors import UserError
from engine.sandbox.base import SandboxLimits
from tasks.base import Grade, Instance
from tasks.binpack.task import BinPackTask

HERE = Path(__file__).resolve().parent
SEED_DIR = HERE.parents[1] / "agents_seed" / "binpack_cpp"
BUILD_S, RUN_S = 30.0, 10.0
MARGIN_S = 20.0  # the runner's own start and the copying of files, on a loaded machine

DESCRIPTION = """\
Online bin packing, in C++. Items arrive one at a time and must be placed at
once into a bin; bins have a fixed capacity. agent.cpp is a whole program:
its main() (fixed) reads the capacity and the items from stdin and, for each
item, calls `double priority(double item, double remaining)` for every open
bin the item fits in (`remaining` is that bin's free room before the item),
puts the item into the bin with the highest priority (ties: the first
opened), and opens a new bin only when no open bin fits. Fewer bins is
better. Instances: uniform integer sizes 20..100 with capacity 150, and
Weibull(3, 45) sizes with capacity 100. The program is compiled with
`g++ -O2 -std=c++17` (30 s build limit) and must then finish within 10 s;
the standard library is available, nothing else."""


def gxx_missing() -> str | None:
    """Why this machine cannot build the task's agents (one line), or None."""
    if shutil.which("g++") is None:
        return "the binpack_cpp task compiles its agent with g++, which is not on PATH (Debian: apt-get install g++)"
    return None


class BinPackCppTask(BinPackTask):
    name = "binpack_cpp"
    description = DESCRIPTION
    entry_file = "agent.cpp"
    entry_function = ""  # a program in another language: the runner builds and runs all of it (engine/lang)
    entry_args: tuple[str, ...] = ()
    answer_file = "answer.json"

    def __init__(
        self,
        instances_path: str | None = None,
        instance_seed: int = 0,
        dev_per_family: int = 2,
        holdout_per_family: int = 4,
        build_s: float = BUILD_S,
        run_s: float = RUN_S,
    ) -> None:
        missing = gxx_missing()
        if missing:
            raise UserError(missing)
        super().__init__(instances_path, instance_seed, max(8, dev_per_family), max(8, holdout_per_family))
        self.kept = {"dev": dev_per_family, "holdout": holdout_per_family}
        self.build_s, self.run_s = build_s, run_s
        overall = build_s + run_s + MARGIN_S
        self.limits = SandboxLimits(
            timeout_s=overall, cpu_s=math.ceil(overall), memory_mb=1024, file_size_mb=64, processes=64
        )

    def seed_files(self) -> dict[str, str]:
        return {self.entry_file: (SEED_DIR / "agent.cpp").read_text()}

    def reference_agents(self) -> dict[str, dict[str, str]]:
        return {"best_fit": {self.entry_file: (SEED_DIR / "best_fit.cpp").read_text()}}

    def instances(self) -> list[Instance]:
        """binpack's instances: from --instances as binpack reads them, else the first few of its generated sets
        (ids end in the index within the family)."""
        every = super().instances()
        if self.instances_path:
            return every
        return [i for i in every if int(i.id.rsplit("_", 1)[1]) < self.kept[i.split]]

    def sandbox_files(self, instance: Instance) -> dict[str, bytes]:
        return {
            "runner.py": (HERE / "runner.py").read_bytes(),
            "instance.json": json.dumps(instance.data).encode(),
            "limits.json": json.dumps({"build_s": self.build_s, "run_s": self.run_s}).encode(),
        }

    def command(self) -> Sequence[str]:
        return [self.python or sys.executable, "runner.py"]

    def grade(self, instance: Instance, answer: bytes) -> Grade:
        """The runner's failure message as the feedback of a failed evaluation; else binpack's checks."""
        try:
            parsed = json.loads(answer)
        except (ValueError, UnicodeDecodeError):
            return Grade(False, {}, "answer.json is not JSON")
        if isinstance(parsed, Mapping):
            error = parsed.get("error")
            return Grade(False, {}, str(error)[:800] if error else "answer must list one bin per item")
        return super().grade(instance, answer)
