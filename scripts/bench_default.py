"""The default search over several seeds: does the final node beat the seed on holdout, and how fast?

Runs `python -m engine.search --budget B --seed S` (the README's first command,
one seed at a time, each in a fresh run folder), then reads each archive and
prints, per seed: wall time, the final node, its mean holdout score and excess
over L1 beside the seed's (first fit) and the reference's (best fit).

    python scripts/bench_default.py            # seeds 0..4, budget 200
    python scripts/bench_default.py --seeds 3 --budget 100
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # `python scripts/X.py` puts scripts/, not the checkout, on the path
    sys.path.insert(0, str(REPO))


def _figures(rows: list) -> tuple[float | None, float | None]:
    """(mean score, mean excess over L1 in %) of evaluations or reference results."""
    scores = [float(r.score) for r in rows]
    excess = [100 * float(r.metrics["excess"]) for r in rows if r.metrics.get("excess") is not None]
    return (sum(scores) / len(scores) if scores else None, sum(excess) / len(excess) if excess else None)


def holdout_figures(archive: Path) -> dict:
    from archive import Archive
    from engine.runinfo.reading import final_choice

    with Archive.open(archive, read_only=True) as opened:
        final = final_choice(opened)[0]  # type: ignore[index]
        holdout = opened.evaluations("holdout")
        seed = _figures([e for e in holdout if e.node_id == 0])
        best = _figures([e for e in holdout if e.node_id == final])
        ref = _figures([r for r in opened.references() if r.agent == "best_fit" and r.split == "holdout"])
        nodes = opened.node_status_counts()
    return {"final": final, "seed": seed, "final_fig": best, "ref": ref, "nodes": nodes}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--budget", type=int, default=200)
    parser.add_argument("--policy", default="hgm")
    args = parser.parse_args()
    print(
        f"machine: {os.cpu_count()} cores; command: python -m engine.search --budget {args.budget} "
        f"--policy {args.policy} --seed S (default workers and sandbox: auto)"
    )
    print(
        f"{'seed':>4} {'wall s':>7} {'final':>6} {'nodes v/i':>9} | {'holdout score':>13} "
        f"{'(seed)':>7} | {'excess %':>8} {'(seed)':>7} {'(best fit)':>10}"
    )
    wins, walls = 0, []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.seeds):
            runs = Path(tmp) / f"s{seed}"
            start = time.perf_counter()
            out = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "engine.search",
                    "--budget",
                    str(args.budget),
                    "--policy",
                    args.policy,
                    "--seed",
                    str(seed),
                    "--run-dir",
                    str(runs),
                    "--quiet",
                ],
                cwd=REPO,
                capture_output=True,
                text=True,
            )
            wall = time.perf_counter() - start
            if out.returncode != 0:
                print(f"seed {seed}: exit {out.returncode}\n{out.stderr}")
                return 1
            (run,) = list(runs.iterdir())
            fig = holdout_figures(run / "archive.duckdb")
            nodes = fig["nodes"]
            valid, invalid = nodes.get("valid", 0), sum(v for k, v in nodes.items() if k != "valid")
            better = fig["final_fig"][1] < fig["seed"][1]
            wins += better
            walls.append(wall)
            print(
                f"{seed:>4} {wall:>7.1f} {fig['final']:>6} {valid:>4}/{invalid:<4} | {fig['final_fig'][0]:>13.3f} "
                f"{fig['seed'][0]:>7.3f} | {fig['final_fig'][1]:>8.3f} {fig['seed'][1]:>7.3f} {fig['ref'][1]:>10.3f}"
            )
    print(
        f"final beats the seed on holdout excess in {wins}/{args.seeds} seeds; "
        f"wall time mean {sum(walls) / len(walls):.1f} s, max {max(walls):.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
