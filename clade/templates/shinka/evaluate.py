"""Evaluator (ShinkaEvolve format): pack circles into the unit square, as large as possible.

    python evaluate.py --program_path initial.py --results_dir results

Runs the program (building it first if its language compiles), which prints one circle a line: its
centre x, y and its radius r. The packing is correct when there are exactly CIRCLES circles, each inside
the unit square [0, 1] x [0, 1] and none overlapping another (within TOLERANCE); its combined_score is the
sum of the radii, higher is better. Writes results/metrics.json and results/correct.json, as
ShinkaEvolve's evaluators do; an incorrect packing says why in correct.json's "error".
"""
import argparse
import json
import math

CIRCLES = 6
TOLERANCE = 1e-9

# @@RUN_PROGRAM@@


def read_circles(printed):
    circles = []
    for number, line in enumerate(printed.splitlines(), 1):
        words = line.split()
        if not words:
            continue
        if len(words) != 3:
            raise Failed(f"line {number}: expected 'x y r', got {line.strip()[:60]!r}")
        try:
            x, y, r = (float(w) for w in words)
        except ValueError:
            raise Failed(f"line {number}: {line.strip()[:60]!r} is not three numbers") from None
        if not all(math.isfinite(v) for v in (x, y, r)):
            raise Failed(f"line {number}: a number is not finite")
        circles.append((x, y, r))
    return circles


def problem(circles):
    """Why the packing is not allowed, or None."""
    if len(circles) != CIRCLES:
        return f"{len(circles)} circles printed, {CIRCLES} wanted"
    for i, (x, y, r) in enumerate(circles):
        if r < 0:
            return f"circle {i} has a negative radius {r}"
        if x - r < -TOLERANCE or x + r > 1 + TOLERANCE or y - r < -TOLERANCE or y + r > 1 + TOLERANCE:
            return f"circle {i} ({x:.4f}, {y:.4f}, r={r:.4f}) leaves the unit square"
    for i, (x, y, r) in enumerate(circles):
        for j in range(i):
            u, v, s = circles[j]
            if math.hypot(x - u, y - v) < r + s - TOLERANCE:
                return f"circles {j} and {i} overlap"
    return None


def write(results_dir, score, correct, error="", public=None, feedback=""):
    with open(os.path.join(results_dir, "metrics.json"), "w") as fh:
        json.dump({"combined_score": score, "public": public or {}, "text_feedback": feedback}, fh)
    with open(os.path.join(results_dir, "correct.json"), "w") as fh:
        json.dump({"correct": correct, "error": error}, fh)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--program_path", required=True)
    parser.add_argument("--results_dir", required=True)
    args = parser.parse_args()
    os.makedirs(args.results_dir, exist_ok=True)
    try:
        circles = read_circles(run_program(args.program_path))
    except Failed as exc:
        return write(args.results_dir, 0.0, False, str(exc))
    why = problem(circles)
    if why:
        return write(args.results_dir, 0.0, False, why)
    total = sum(r for _, _, r in circles)
    smallest = min(r for _, _, r in circles)
    write(args.results_dir, total, True, public={"sum_of_radii": total, "smallest_radius": smallest},
          feedback=f"{CIRCLES} circles, sum of radii {total:.6f}, smallest radius {smallest:.6f}")


if __name__ == "__main__":
    main()
