"""Evaluator of the single-machine scheduling example (ShinkaEvolve's convention, a C++ program).

    python evaluate.py --program_path initial.cpp --results_dir results

Builds the program with g++ (60 s limit), runs it once on 12 fixed random
instances of 60 jobs (10 s limit) and scores each schedule by its total
weighted completion time against the optimum, which Smith's rule gives
(jobs in decreasing weight / length; Smith 1956). metrics.json holds
`combined_score`, the mean of optimum / cost over the instances (1.0 is
optimal; higher is better); correct.json says whether every output was a
valid order. A program that does not build, crashes or prints something that
is not a permutation of the jobs is incorrect (score 0).
"""

import argparse
import json
import os
import random
import subprocess

INSTANCES, JOBS = 12, 60
BUILD_S, RUN_S = 60, 10


def instances():
    """Lists of (length, weight) jobs: lengths 1..100, weights 1..10, drawn from a fixed seed."""
    rng = random.Random(7)
    return [[(rng.randint(1, 100), rng.randint(1, 10)) for _ in range(JOBS)] for _ in range(INSTANCES)]


def cost(jobs, order):
    """Sum of weight x completion time when the jobs run in `order`."""
    clock = total = 0
    for i in order:
        length, weight = jobs[i]
        clock += length
        total += weight * clock
    return total


def smith_optimum(jobs):
    return cost(jobs, sorted(range(len(jobs)), key=lambda i: jobs[i][1] / jobs[i][0], reverse=True))


def write(results, score, correct, error=""):
    with open(os.path.join(results, "metrics.json"), "w") as fh:
        json.dump({"combined_score": score, "public": {"instances": INSTANCES, "jobs": JOBS}}, fh)
    with open(os.path.join(results, "correct.json"), "w") as fh:
        json.dump({"correct": correct, "error": error}, fh)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--program_path", required=True)
    parser.add_argument("--results_dir", required=True)
    args = parser.parse_args()
    os.makedirs(args.results_dir, exist_ok=True)
    binary = os.path.join(args.results_dir, "program")
    command = ["g++", "-O1", "-std=c++17", "-o", binary, args.program_path]
    try:
        build = subprocess.run(command, capture_output=True, text=True, timeout=BUILD_S)
    except subprocess.TimeoutExpired:
        return write(args.results_dir, 0.0, False, f"the build took more than {BUILD_S} s")
    if build.returncode != 0:
        return write(args.results_dir, 0.0, False, "build failed: " + build.stderr.strip()[-300:])
    cases = instances()
    lines = [str(len(cases))]
    for jobs in cases:
        lines.append(str(len(jobs)))
        lines.extend(f"{length} {weight}" for length, weight in jobs)
    try:
        run = subprocess.run([binary], input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=RUN_S)
    except subprocess.TimeoutExpired:
        return write(args.results_dir, 0.0, False, f"the program ran more than {RUN_S} s")
    if run.returncode != 0:
        return write(args.results_dir, 0.0, False, f"the program exited with {run.returncode}")
    outputs = run.stdout.strip().splitlines()
    if len(outputs) != len(cases):
        return write(args.results_dir, 0.0, False, f"{len(outputs)} output lines for {len(cases)} instances")
    ratios = []
    for jobs, line in zip(cases, outputs):
        try:
            order = [int(v) for v in line.split()]
        except ValueError:
            return write(args.results_dir, 0.0, False, "an output line holds something that is not a job index")
        if sorted(order) != list(range(len(jobs))):
            return write(args.results_dir, 0.0, False, "an output line is not a permutation of the jobs")
        ratios.append(smith_optimum(jobs) / cost(jobs, order))
    write(args.results_dir, sum(ratios) / len(ratios), True)


if __name__ == "__main__":
    main()
