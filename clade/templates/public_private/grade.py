"""Grader (public/private format): the accuracy of submission.csv against the hidden labels.

Runs outside the sandbox, in Clade; the program never sees this file or data/private/.
"""
import csv
import os

SUBMISSION_FILE = "submission.csv"
METRIC_NAME = "accuracy"
HIGHER_IS_BETTER = True
PERFECT_SCORE = 1.0


def labels(path):
    with open(path, newline="") as fh:
        return {row["id"]: row["label"].strip() for row in csv.DictReader(fh)}


def grade(submission_path, private_dir):
    answers = labels(os.path.join(private_dir, "answers.csv"))
    predicted = labels(submission_path)
    missing = sorted(set(answers) - set(predicted))
    if missing:
        raise ValueError(f"no label for ids {', '.join(missing[:5])}")
    wrong = sorted({v for v in predicted.values()} - {"0", "1"})
    if wrong:
        raise ValueError(f"labels must be 0 or 1, not {wrong[0]!r}")
    return sum(predicted[i] == label for i, label in answers.items()) / len(answers)
