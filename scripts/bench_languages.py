"""Per language, how the offline default does on a compiled program: children made, the share that parse,
the share the compiler check lets through, the share of evaluations that end ok, the seed's and the best score.

    python scripts/bench_languages.py                      # C++, Rust, Go, Fortran (+ C), budget 30, seed 0
    python scripts/bench_languages.py --budget 30 --seeds 5
    python scripts/bench_languages.py --languages cpp --budget 6

Why: issue 17 asks, per language, for the share of children that parse and the share that evaluate ok. The
task is the same in every language (tests/fixtures/tasks/shinka_<language>: a program reading x from stdin and
printing an estimate y; combined_score = 1 / (1 + mean absolute error) against y = 0.7 x + 1, the seed says
0.1 x + 3), so the figures differ only by what the language and its grammar make of the same mutations.
C has no fixture folder; its folder is written here from shinka_cpp's (the same program in C, built by gcc).
Julia is listed and skipped: no fixture is written for it (and its toolchain is rarely installed).

Each run is `python -m engine.search --task FOLDER --budget B --seed S --run-dir TMP --quiet` with
everything else the default (policy hgm, sandbox auto, workers one per core, the offline mutator, the
default syntax and compile checks), read back from its archive afterwards (docs/reference/schema.md:
tables `nodes` and `evaluations`).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
FIXTURES = REPO / "tests" / "fixtures" / "tasks"

# (name, fixture folder or None, compiler, Debian package)
LANGUAGES = (
    ("cpp", "shinka_cpp", "g++", "g++"),
    ("rust", "shinka_rust", "rustc", "rustc"),
    ("go", "shinka_go", "go", "golang-go"),
    ("fortran", "shinka_fortran", "gfortran", "gfortran"),
    ("c", None, "gcc", "gcc"),
    ("julia", None, "julia", "julia"),
)
SYNTAX = re.compile(r"^\S+: line \d+, column \d+:|EVOLVE-BLOCK")  # engine.lang.check's reasons
COMPILE = re.compile(r"^(gcc|g\+\+|rustc|go|gfortran) \S+ \(in \w+\)")  # engine.lang.compile_check's reasons
C_PROGRAM = """\
/* A ShinkaEvolve-format task in C, written by scripts/bench_languages.py: fit a line to a hidden one. */
#include <stdio.h>

// EVOLVE-BLOCK-START
double estimate(double x) {
    return 0.1 * x + 3.0;
}
// EVOLVE-BLOCK-END

int main(void) {
    double x;
    while (scanf("%lf", &x) == 1) {
        printf("%.17g\\n", estimate(x));
    }
    return 0;
}
"""


def c_folder(where: Path) -> Path:
    """shinka_cpp's task with the program in C: its evaluate.py building with gcc instead of g++."""
    folder = where / "shinka_c"
    folder.mkdir(parents=True, exist_ok=True)
    evaluate = (FIXTURES / "shinka_cpp" / "evaluate.py").read_text()
    assert '["g++", "-O1"' in evaluate, "shinka_cpp/evaluate.py changed: update c_folder"
    (folder / "evaluate.py").write_text(evaluate.replace('["g++", "-O1"', '["gcc", "-O1"').replace("C++", "C"))
    (folder / "initial.c").write_text(C_PROGRAM)
    return folder


@dataclass
class Figures:
    """One run's counts, read from its archive."""

    children: int = 0
    syntax_refused: int = 0
    compile_refused: int = 0
    duplicates: int = 0
    other_invalid: int = 0
    failed: int = 0
    evaluations: int = 0
    evaluations_ok: int = 0
    seed_score: float = float("nan")
    best_score: float = float("nan")
    final_holdout: float = float("nan")
    wall_s: float = 0.0
    statuses: dict = field(default_factory=dict)


def read_run(run: Path) -> Figures:
    from archive import Archive
    from engine.runinfo.reading import final_choice

    out = Figures()
    with Archive.open(run, read_only=True) as archive:
        for node in [n for n in archive.nodes() if n.id > 0]:
            status, reason = node.status, node.reason or ""
            out.children += 1
            if status == "failed":
                out.failed += 1
            elif status == "invalid":
                if SYNTAX.search(reason):
                    out.syntax_refused += 1
                elif COMPILE.search(reason):
                    out.compile_refused += 1
                elif "duplicate" in reason:
                    out.duplicates += 1
                else:
                    out.other_invalid += 1
        dev = archive.evaluations("dev")
        for e in dev:
            if e.node_id > 0:
                out.evaluations += 1
                out.evaluations_ok += e.status == "ok"
                out.statuses[e.status] = out.statuses.get(e.status, 0) + 1
        seed = _metrics([e for e in dev if e.node_id == 0])
        best = _metrics([e for e in dev if e.status == "ok"])
        final = final_choice(archive)
        if final is not None:
            held = _metrics([e for e in archive.evaluations("holdout") if e.node_id == final[0] and e.status == "ok"])
            out.final_holdout = sum(held) / len(held) if held else float("nan")
    out.seed_score = sum(seed) / len(seed) if seed else float("nan")
    out.best_score = max(best) if best else float("nan")
    return out


def _metrics(evaluations: list) -> list[float]:
    """The raw metric (`metric` in the metrics JSON) of each evaluation that has one."""
    return [float(e.metrics["metric"]) for e in evaluations if e.metrics.get("metric") is not None]


def run_search(folder: Path, budget: int, seed: int, run_dir: Path) -> tuple[Path, float]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    argv = [
        sys.executable,
        "-m",
        "engine.search",
        "--task",
        str(folder),
        "--budget",
        str(budget),
        "--seed",
        str(seed),
        "--run-dir",
        str(run_dir),
        "--quiet",
    ]
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    runs = [p for p in run_dir.iterdir() if (p / "archive.duckdb").exists()]
    assert len(runs) == 1, runs
    return runs[0], wall


def one_try_parse_share(folder: Path, draws: int) -> float | None:
    """The share of single operator applications on the seed's EVOLVE-BLOCK whose child parses and differs
    from the seed (engine.lang.mutate with one try instead of its retries); None without the module."""
    import numpy as np

    from engine.lang import mutate as lang_mutate
    from engine.lang.markers import evolve_region
    from engine.lang.registry import language_of
    from engine.mutators.base import MutationError
    from tasks.adapters import make_adapted_task

    task = make_adapted_task(folder)
    language = language_of(task.entry_file)
    source = task.seed_files()[task.entry_file]
    region = evolve_region(source, language)
    tries, lang_mutate.TRIES = getattr(lang_mutate, "TRIES", None), 1
    try:
        made = 0
        for k in range(draws):
            try:
                lang_mutate.mutate(source, language, np.random.default_rng(k), region)
                made += 1
            except MutationError:
                pass
    finally:
        lang_mutate.TRIES = tries
    return made / draws


def percent(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:5.1f} %" if whole else "    -  "


def table(rows: list[tuple[str, list[Figures], float | None]]) -> str:
    head = (
        f"{'language':<9} | {'runs':>4} | {'children':>8} | {'parse':>7} | {'compile ok':>10} | {'dups':>4} | "
        f"{'failed':>6} | {'evals':>5} | {'evals ok':>8} | {'seed':>6} | {'best':>6} | {'final ho':>8} | "
        f"{'1-try parse':>11} | {'wall s':>6}"
    )
    lines = [head, "-" * len(head)]
    for name, runs, one_try in rows:
        children = sum(f.children for f in runs)
        parsed = children - sum(f.syntax_refused for f in runs)
        checked = parsed - sum(f.duplicates + f.failed + f.other_invalid for f in runs)  # what reached a compiler
        compiled = checked - sum(f.compile_refused for f in runs)
        evals = sum(f.evaluations for f in runs)
        ok = sum(f.evaluations_ok for f in runs)

        def mean(values: list[float]) -> str:
            values = [v for v in values if v == v]
            return f"{sum(values) / len(values):6.3f}" if values else "     -"

        lines.append(
            f"{name:<9} | {len(runs):>4} | {children:>8} | {percent(parsed, children):>7} | "
            f"{percent(compiled, checked):>10} | {sum(f.duplicates for f in runs):>4} | "
            f"{sum(f.failed for f in runs):>6} | {evals:>5} | {percent(ok, evals):>8} | "
            f"{mean([f.seed_score for f in runs])} | {mean([f.best_score for f in runs])} | "
            f"{mean([f.final_holdout for f in runs]):>8} | "
            f"{'-' if one_try is None else f'{100 * one_try:5.1f} %':>11} | "
            f"{sum(f.wall_s for f in runs) / len(runs):6.1f}"
        )
    return "\n".join(lines)


HOW = """\
How it was measured: per language, `python -m engine.search --task tests/fixtures/tasks/shinka_<language>
--budget {budget} --seed S --run-dir <temp> --quiet` for S in {seeds} (the defaults otherwise: hgm, sandbox
auto, workers one per core, the offline mutator, the syntax check and, where the compiler is installed, the
compile check), then its archive read back:
  children     nodes other than the seed (any status), summed over the runs;
  parse        the share of those not refused by the tree-sitter syntax check (reason `FILE: line L, column C:
               ...` or an EVOLVE-BLOCK marker problem); the offline mutator retries until its child parses,
               so a refusal here would be the check disagreeing with the mutator;
  compile ok   of those that parse and are no duplicate, the share not refused by the compile check (reason
               `g++ -fsyntax-only (in bwrap): ...`, `rustc --emit=metadata ...`, `go vet ...`,
               `gfortran -fsyntax-only ...`);
  dups, failed children refused as duplicates of a stored node; expansions whose mutator made no child;
  evals ok     the share of the children's dev evaluations with status ok (built, ran, printed 20 numbers,
               correct.json true); the others failed: failed_in_evaluator (correct: false with a why:
               the build failed, ...), bad_output (no why) or errors;
  seed, best   the seed's dev combined_score and the best dev combined_score of any node (means over runs);
  final ho     the final node's holdout combined_score (mean over runs);
  1-try parse  the share of {draws} single operator applications on the seed's EVOLVE-BLOCK (engine.lang.mutate
               with one try, generator seeds 0..{last}) whose child parses and differs from the seed;
  wall s       mean wall time of one search.
combined_score = 1 / (1 + mean absolute error) against the hidden line y = 0.7 x + 1 on 20 points."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=30, help="dev evaluations per search (default 30)")
    parser.add_argument("--seeds", type=int, default=1, help="searches per language, seeds 0..N-1 (default 1)")
    parser.add_argument(
        "--languages",
        default="cpp,rust,go,fortran,c,julia",
        help="comma-separated: cpp, rust, go, fortran, c, julia (default all)",
    )
    parser.add_argument("--draws", type=int, default=200, help="single operator applications per language")
    args = parser.parse_args(argv)
    wanted = [w.strip() for w in args.languages.split(",") if w.strip()]
    unknown = set(wanted) - {name for name, *_ in LANGUAGES}
    if unknown:
        parser.error(f"unknown language(s): {', '.join(sorted(unknown))}")
    if importlib.util.find_spec("tree_sitter") is None:
        print("skipped: tree-sitter is not installed (pip install -e '.[languages]')")
        return 0
    rows, skipped = [], []
    with tempfile.TemporaryDirectory(prefix="bench-languages-") as tmp:
        for name, fixture, compiler, debian in LANGUAGES:
            if name not in wanted:
                continue
            if fixture is None and name != "c":
                skipped.append(
                    f"{name}: no fixture folder for it (tests/fixtures/tasks has none)"
                    + ("" if shutil.which(compiler) else f"; {compiler} is not installed (Debian: {debian})")
                )
                continue
            if shutil.which(compiler) is None:  # the one on PATH, rustup's included (engine/lang/toolchain.py)
                skipped.append(f"{name}: {compiler} is not installed (Debian: {debian})")
                continue
            folder = FIXTURES / fixture if fixture else c_folder(Path(tmp))
            runs = []
            for seed in range(args.seeds):
                run_dir = Path(tmp) / f"{name}-{seed}"
                run_dir.mkdir()
                run, wall = run_search(folder, args.budget, seed, run_dir)
                figures = read_run(run)
                figures.wall_s = wall
                runs.append(figures)
                print(
                    f"  {name} seed {seed}: {figures.children} children, evaluations {figures.statuses}, {wall:.1f} s",
                    flush=True,
                )
            rows.append((name, runs, one_try_parse_share(folder, args.draws)))
    print()
    print(table(rows))
    for line in skipped:
        print(f"skipped {line}")
    print()
    print(
        HOW.format(
            budget=args.budget,
            seeds=", ".join(str(s) for s in range(args.seeds)),
            draws=args.draws,
            last=args.draws - 1,
        )
    )
    print(f"Machine: {os.cpu_count()} cores, load average {', '.join(f'{v:.2f}' for v in os.getloadavg())}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
