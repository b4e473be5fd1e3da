"""Proof that the Polyglot harness grades right: every exercise's reference passes, its untouched stub fails.

    python scripts/bench_polyglot.py --sandbox bwrap                 # all 225, reference and stub, 2 workers
    python scripts/bench_polyglot.py --sandbox docker --languages python,go
    python scripts/bench_polyglot.py --exercises python/affine-cipher,rust/acronym --which reference

For each exercise of `--languages` (default: all six) the script grades two answers through the task's own
grading (`PolyglotTask.check_job`, run by the sandbox backend the engine would use, then `grade`): the
reference solution from the exercise's `.meta/` put in the solution files, and the stub as shipped (an
empty answer). Jobs run `--workers` at a time (default 2), references first. Printed per language: the
exercises, how many references pass (all tests), how many stubs pass, and the median and worst grading
time of a job (wall clock, sandbox included); then each reference that failed and each stub that passed,
with the grader's line; the last line is `polyglot: reference R of N pass, stubs S of N pass, in T s`
(T: the wall time of all the grading). Exercises the run leaves out (a library no Debian package holds)
are named with the reason and not counted.

The exercises come from CLADE_POLYGLOT_DIR or Clade's cache (fetched on first use), the toolchains from
where users install them (tasks/polyglot/toolchains.py). Exit status 0 whatever the counts (this reports);
2 when the exercises or a toolchain cannot be had (one line).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.errors import UserError  # noqa: E402
from tasks.base import CheckRun  # noqa: E402
from tasks.polyglot.exercises import LANGUAGE_NAMES, LANGUAGES  # noqa: E402
from tasks.polyglot.task import PolyglotTask  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sandbox", default="bwrap", choices=("bwrap", "docker", "process"))
    parser.add_argument("--languages", default=",".join(LANGUAGES), help="comma-separated (default: all six)")
    parser.add_argument("--exercises", default="", help="comma-separated ids (python/affine-cipher); overrides")
    parser.add_argument("--which", default="reference,stub", help="reference, stub or both (default)")
    parser.add_argument("--workers", type=int, default=2)
    return parser.parse_args(argv)


def make_box(task: PolyglotTask, name: str):
    from engine.sandbox import make_sandbox

    options = {"toolchains": task.toolchains(), "python": task.python}
    if name == "docker":  # the image's own compilers; the caches and jars bound read-only
        options = {"toolchains": task.toolchains(), "image": task.docker_image()}
    try:
        return make_sandbox(name, **options)
    except (RuntimeError, ValueError) as exc:
        raise UserError(f"the {name} sandbox cannot run here: {exc}") from None


async def grade_all(task: PolyglotTask, box, jobs: list[tuple[str, object, bytes]], workers: int, progress):
    """[(kind, instance, grade, seconds)] for every (kind, instance, answer), `workers` at a time."""
    gate = asyncio.Semaphore(workers)

    async def one(kind, instance, answer):
        async with gate:
            job = task.check_job(instance, answer)
            started = time.monotonic()
            result = await box.run(job)
            took = time.monotonic() - started
            grade = task.grade(instance, answer, CheckRun(job, result))
            progress()
            return kind, instance, grade, took

    return await asyncio.gather(*(one(k, i, a) for k, i, a in jobs))


def answers(task: PolyglotTask, which: list[str]) -> list[tuple[str, object, bytes]]:
    jobs = []
    for kind in ("reference", "stub"):
        if kind not in which:
            continue
        for instance in task.instances():
            exercise = task.exercise(instance)
            files = exercise.reference() if kind == "reference" else {}
            jobs.append((kind, instance, json.dumps({"files": files}).encode()))
    return jobs


def report(rows, task: PolyglotTask, which: list[str], wall: float) -> None:
    languages = [lang for lang in LANGUAGES if any(i.id.startswith(lang + "/") for _, i, _, _ in rows)]
    print(f"{'language':<11} {'exercises':>9} {'reference':>9} {'stub':>5} {'median s':>9} {'worst s':>8}")
    for lang in languages:
        mine = [r for r in rows if r[1].id.startswith(lang + "/")]
        n = len({r[1].id for r in mine})
        ref = sum(1 for k, _, g, _ in mine if k == "reference" and g.metrics.get("resolved"))
        stub = sum(1 for k, _, g, _ in mine if k == "stub" and g.metrics.get("resolved"))
        times = [t for *_, t in mine]
        print(
            f"{LANGUAGE_NAMES[lang]:<11} {n:>9} {ref if 'reference' in which else '-':>9} "
            f"{stub if 'stub' in which else '-':>5} {statistics.median(times):>9.1f} {max(times):>8.1f}"
        )
    for kind, instance, grade, _ in rows:
        if (kind == "reference") != bool(grade.metrics.get("resolved")):
            said = "reference fails" if kind == "reference" else "stub passes"
            print(f"  {said}: {instance.id}: {grade.feedback}")
    for exercise, why in task.found.left_out.items():
        print(f"  left out {exercise}: {why}")
    n = len({r[1].id for r in rows})
    refs = sum(1 for k, _, g, _ in rows if k == "reference" and g.metrics.get("resolved"))
    stubs = sum(1 for k, _, g, _ in rows if k == "stub" and g.metrics.get("resolved"))
    said_refs = f"reference {refs} of {n} pass" if "reference" in which else "references not graded"
    said_stubs = f"stubs {stubs} of {n} pass" if "stub" in which else "stubs not graded"
    print(f"polyglot: {said_refs}, {said_stubs}, in {wall:.0f} s")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    which = [w.strip() for w in args.which.split(",") if w.strip()]
    chosen = args.exercises or args.languages
    try:
        task = PolyglotTask(instances_path=chosen)
        task.instances()
        box = make_box(task, args.sandbox)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"polyglot on {box.name}, {args.workers} workers: {'; '.join(task.found.said)}", file=sys.stderr)
    jobs = answers(task, which)
    from rich.progress import Progress

    with Progress(transient=True) as bar:
        counter = bar.add_task("grading", total=len(jobs))
        started = time.monotonic()
        rows = asyncio.run(grade_all(task, box, jobs, args.workers, lambda: bar.advance(counter)))
        wall = time.monotonic() - started
    report(rows, task, which, wall)
    return 0


if __name__ == "__main__":
    sys.exit(main())
