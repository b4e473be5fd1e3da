"""Clade's runner for a metric:value task folder; it runs INSIDE the sandbox, beside the candidate solution.

It runs `python benchmark.py` (which imports the candidate, saved as
initial_solution.py), passes its output through, and takes the last line of
the form `<METRIC_NAME>: <number>` (or `=`) as the result, written to
answer.json. The benchmark runs in the same sandbox as the candidate's code,
so a hostile candidate can print such a line itself: this format cannot
protect the metric (see the README). Standalone: the standard library only.
"""
import json
import re
import subprocess
import sys


def main():
    with open("clade_task.json") as fh:
        settings = json.load(fh)
    name = settings["metric_name"]
    pattern = re.compile(r"^\s*" + re.escape(name) + r"\s*[:=]\s*(\S+)\s*$")
    proc = subprocess.run([sys.executable, "benchmark.py"], check=False, capture_output=True, text=True, errors="replace")
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    found = [m.group(1) for m in map(pattern.match, proc.stdout.splitlines()) if m]
    if proc.returncode != 0:
        lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
        answer = {"error": f"benchmark.py exited with {proc.returncode}" + (f": {lines[-1][:300]}" if lines else "")}
    elif not found:
        answer = {"error": f"benchmark.py printed no line '{name}: <value>'"}
    else:
        answer = {"value": found[-1], "lines": len(found)}
    with open("answer.json", "w") as fh:
        json.dump(answer, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
