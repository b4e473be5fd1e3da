"""Grader of the sales forecasting example (public/private format): RMSE of the forecast against the real sales.

It runs in the engine, outside the sandbox; the answers in data/private/ never reach the program.
"""

import csv
import math
import os

SUBMISSION_FILE = "submission.csv"
METRIC_NAME = "rmse"
HIGHER_IS_BETTER = False
PERFECT_SCORE = 0.0


def read_column(path, key, value):
    """{key: float(value)} for each row of a CSV file (parsed as data, never executed)."""
    with open(path, newline="") as fh:
        return {row[key]: float(row[value]) for row in csv.DictReader(fh)}


def grade(submission_path, private_dir):
    answers = read_column(os.path.join(private_dir, "answers.csv"), "id", "sales")
    predicted = read_column(submission_path, "id", "sales")
    missing = sorted(set(answers) - set(predicted), key=int)
    if missing:
        raise ValueError(f"no forecast for ids {missing[:5]}")
    if not all(math.isfinite(predicted[i]) for i in answers):
        raise ValueError("a forecast is not a finite number")
    return math.sqrt(sum((predicted[i] - sales) ** 2 for i, sales in answers.items()) / len(answers))
