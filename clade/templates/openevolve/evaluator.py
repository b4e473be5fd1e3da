"""Evaluator (OpenEvolve format): how closely the program's cooling curve follows the measured one.

OpenEvolve (and Clade) call evaluate(program_path) and read the metrics it returns; combined_score is the
fitness, higher is better. The program reads times t (minutes, one per line) on standard input and prints
its estimate of the coffee's temperature (degrees C) at each. combined_score = 1 / (1 + RMSE) against
the readings below; a program that does not build, run or print one number per time scores 0, with the
reason under "error".
"""
import math

# @@RUN_PROGRAM@@

# A cup of coffee cooling in a 22 degree room, read every two minutes: (minute, degrees C).
READINGS = [
    (0, 89.92), (2, 80.10), (4, 71.31), (6, 63.98), (8, 57.58), (10, 52.49), (12, 48.37), (14, 44.31),
    (16, 41.22), (18, 38.19), (20, 35.85), (22, 33.75), (24, 31.47), (26, 30.75), (28, 29.39), (30, 28.32),
]


def evaluate(program_path):
    try:
        printed = run_program(program_path, "".join(f"{t}\n" for t, _ in READINGS))
        estimates = [float(v) for v in printed.split()]
    except Failed as exc:
        return {"combined_score": 0.0, "error": str(exc)}
    except ValueError:
        return {"combined_score": 0.0, "error": "the program printed something that is not a number"}
    if len(estimates) != len(READINGS):
        return {"combined_score": 0.0, "error": f"{len(estimates)} numbers printed for {len(READINGS)} times"}
    rmse = math.sqrt(sum((e - c) ** 2 for e, (_, c) in zip(estimates, READINGS)) / len(READINGS))
    if not math.isfinite(rmse):
        return {"combined_score": 0.0, "error": "an estimate is not a finite number"}
    return {"combined_score": 1.0 / (1.0 + rmse), "rmse": rmse}

