"""Clade's runner for a ShinkaEvolve task folder; it runs INSIDE the sandbox, beside the candidate program.

It calls the folder's evaluator the way ShinkaEvolve does,
`python evaluate.py --program_path <program> --results_dir <dir>` (in repo
mode `--repo_path <repository folder>` instead), then reads
the `metrics.json` and `correct.json` the evaluator wrote there and copies
them into answer.json; the engine checks them outside. Standalone: the
standard library only. Settings come from clade_task.json.
"""

import json
import os
import re
import subprocess
import sys

RESULTS = "clade_results"


def failed_file(stderr, here):
    """The job's own file a traceback in `stderr` ends in (evaluate.py, the program), when a module is
    missing (the engine then says which Python lacks it); '' otherwise."""
    if "No module named" not in stderr:
        return ""
    files = [os.path.abspath(os.path.join(here, f)) for f in re.findall(r'^\s*File "([^"]+)", line \d+', stderr, re.M)]
    inside = [f for f in files if os.path.dirname(f) == here]
    return os.path.basename(inside[-1]) if inside else ""


def read_json(path):
    try:
        with open(path) as fh:
            return json.load(fh)
    except FileNotFoundError:
        return None
    except ValueError as exc:
        return {"__unreadable__": f"{os.path.basename(path)} is not JSON: {exc}"[:300]}


def main():
    with open("clade_task.json") as fh:
        settings = json.load(fh)
    here = os.getcwd()
    if settings.get("repo"):  # repo mode: the candidate is the repository assembled in that folder
        target = ["--repo_path", os.path.join(here, settings["repo"])]
    else:
        target = ["--program_path", os.path.join(here, settings["program"])]
    proc = subprocess.run(
        [sys.executable, "evaluate.py", *target, "--results_dir", RESULTS],
        check=False,
        cwd=here,
        capture_output=True,
        text=True,
        errors="replace",
    )
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    metrics = read_json(os.path.join(RESULTS, "metrics.json"))
    correct = read_json(os.path.join(RESULTS, "correct.json"))
    answer: dict[str, object]  # a local annotation: never evaluated, whatever the job's Python
    if metrics is None or correct is None:
        lines = [line for line in (proc.stderr + proc.stdout).strip().splitlines() if line.strip()]
        missing = " and ".join(n for n, v in (("metrics.json", metrics), ("correct.json", correct)) if v is None)
        answer = {
            "error": f"evaluate.py (exit {proc.returncode}) wrote no {missing}"
            + (f": {lines[-1][:300]}" if lines else "")
        }
    else:
        answer = {"metrics": metrics, "correct": correct, "returncode": proc.returncode}
    answer["error_file"] = failed_file(proc.stderr, here)
    with open("answer.json", "w") as fh:
        json.dump(answer, fh, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
