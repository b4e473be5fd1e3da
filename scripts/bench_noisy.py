"""A noisy one-instance task: how good the final node truly is, not how lucky its runs were.

    python scripts/bench_noisy.py                         # this checkout, seeds 0-14, budget 60
    python scripts/bench_noisy.py --seeds 5 --checkouts /tmp/old /path/to/clade   # side by side

The task is tests/fixtures/tasks/metric_value_sine with its benchmark made
stochastic: it prints the approximation's mean absolute error against
sin(x) on [0, pi] plus uniform noise U(0, 0.02), so one run of a program is
one draw and the highest single score is partly luck (search/remeasure.py).
Each search runs through the command line (`python -m engine.search --task
<folder> --seed S --budget B --quiet`, default policy, workers and sandbox,
the offline mutator) from each checkout given. Afterwards the final node's
program (the run's last `select_final` event) is scored without noise, in
this process: its true error. Printed per checkout: the mean true error of
the final nodes over the seeds (lower is better), how many beat the seed
program's true error, and how many ended on a program with exactly the
seed's true error (the seed or an equivalent child).
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import types
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "tasks" / "metric_value_sine"
NOISE = 0.02
POINTS = [math.pi * k / 200 for k in range(201)]


def noisy_folder(where: Path) -> Path:
    """The sine fixture, its benchmark printing error + U(0, NOISE)."""
    folder = where / "noisy_sine"
    shutil.copytree(FIXTURE, folder)
    bench = folder / "benchmark.py"
    text = bench.read_text()
    needle = 'print(f"error: {error:.8f}")'
    if needle not in text:
        raise SystemExit(f"error: {bench} no longer prints {needle!r}; update this script")
    bench.write_text(
        text.replace("import math\n", "import math\nimport random\n").replace(
            needle, f'print(f"error: {{error + random.uniform(0.0, {NOISE}):.8f}}")'
        )
    )
    return folder


def true_error(source: str) -> float:
    """The noise-free error of a program defining `approximate(x)`."""
    module = types.ModuleType("candidate")
    exec(compile(source, "candidate", "exec"), module.__dict__)  # noqa: S102 - our own search's output
    return sum(abs(module.approximate(x) - math.sin(x)) for x in POINTS) / len(POINTS)


def final_program(run_dir: Path) -> tuple[int, str, str]:
    """(final node, its program, the seed's program) of the one run under run_dir."""
    from archive import Archive
    from engine.runinfo.reading import final_choice

    (run,) = [p for p in run_dir.iterdir() if p.is_dir()]
    with Archive.open(run / "archive.duckdb", read_only=True) as archive:
        node = final_choice(archive)[0]  # type: ignore[index]
        return int(node), archive.node_files(node)["initial_solution.py"], archive.node_files(0)["initial_solution.py"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=15, help="seeds 0..N-1 (default 15)")
    parser.add_argument("--budget", type=int, default=60)
    parser.add_argument(
        "--checkouts",
        nargs="+",
        default=[str(REPO)],
        help="Clade checkouts to run the searches from (default: this one)",
    )
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))  # the archive reader, when run as `python scripts/bench_noisy.py`
    if args.seeds < 1 or args.budget < 2:
        print("error: --seeds must be 1 or more and --budget 2 or more", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="clade-bench-noisy-") as tmp:
        folder = noisy_folder(Path(tmp))
        print(
            f"noisy sine (error + U(0, {NOISE})), budget {args.budget}, seeds 0..{args.seeds - 1}, "
            "default policy, workers and sandbox; true error of the final node (lower is better)"
        )
        for checkout in args.checkouts:
            errors, seed_error, same = [], None, 0
            for seed in range(args.seeds):
                runs = Path(tmp) / f"runs-{Path(checkout).name}-{seed}"
                command = [
                    sys.executable,
                    "-m",
                    "engine.search",
                    "--task",
                    str(folder),
                    "--seed",
                    str(seed),
                    "--budget",
                    str(args.budget),
                    "--run-dir",
                    str(runs),
                    "--quiet",
                ]
                out = subprocess.run(
                    command,
                    cwd=checkout,
                    capture_output=True,
                    text=True,
                    env=dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True"),
                )
                if out.returncode != 0:
                    print(
                        f"error: {' '.join(command[1:])} in {checkout} exited {out.returncode}: "
                        f"{(out.stderr.strip().splitlines() or ['no output'])[-1]}",
                        file=sys.stderr,
                    )
                    return 1
                node, program, seed_program = final_program(runs)
                seed_error = true_error(seed_program)
                errors.append(true_error(program))
                same += errors[-1] == seed_error
                print(f"  {checkout} seed {seed}: final node {node}, true error {errors[-1]:.5f}", flush=True)
            beat = sum(e < seed_error for e in errors)
            print(
                f"{checkout}: mean true error {statistics.mean(errors):.5f} (seed program {seed_error:.5f}); "
                f"{beat} of {len(errors)} beat the seed, {same} ended on the seed's error"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
