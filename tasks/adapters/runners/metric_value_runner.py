"""Clade's runner for a metric:value task folder; it runs INSIDE the sandbox, beside the candidate solution.

It runs `python benchmark.py <candidate path>`, the format's own convention:
the candidate is saved as initial_solution.py, so a benchmark may load the
file sys.argv[1] names or `import initial_solution`; the path is absolute so
a benchmark that changes directory still finds it. It passes the output
through and takes the last line of the form `<METRIC_NAME>: <number>` (or
`=`, spaces optional) as the result, written to answer.json. The benchmark
runs in the same sandbox as the candidate's code, so a hostile candidate can
print such a line itself: this format cannot protect the metric (see the
README). Standalone: the standard library only.
"""

import json
import os
import re
import subprocess
import sys

STDERR_KEPT = 8000  # characters of the benchmark's stderr passed on: a traceback's header and its last line


def failed_file(stderr, here):
    """The job's own file a traceback in `stderr` ends in (evaluate.py, the program), when a module is
    missing (the engine then says which Python lacks it); '' otherwise."""
    if "No module named" not in stderr:
        return ""
    files = [os.path.abspath(os.path.join(here, f)) for f in re.findall(r'^\s*File "([^"]+)", line \d+', stderr, re.M)]
    inside = [f for f in files if os.path.dirname(f) == here]
    return os.path.basename(inside[-1]) if inside else ""


def main():
    with open("clade_task.json") as fh:
        settings = json.load(fh)
    name = settings["metric_name"]
    pattern = re.compile(r"^\s*" + re.escape(name) + r"\s*[:=]\s*(\S+)\s*$")
    candidate = os.path.abspath("initial_solution.py")
    proc = subprocess.run(
        [sys.executable, "benchmark.py", candidate], check=False, capture_output=True, text=True, errors="replace"
    )
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    found = [m.group(1) for m in map(pattern.match, proc.stdout.splitlines()) if m]
    if proc.returncode != 0:
        lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
        answer = {
            "error": f"benchmark.py exited with {proc.returncode}" + (f": {lines[-1][:300]}" if lines else ""),
            "error_file": failed_file(proc.stderr, os.getcwd()),
        }
    elif not found:
        answer = {"error": f"benchmark.py printed no line '{name}: <value>'"}
    else:  # the stderr's tail too: a traceback there is a failure the benchmark caught (the engine reads it)
        answer = {"value": found[-1], "lines": len(found), "stderr": proc.stderr[-STDERR_KEPT:]}
    with open("answer.json", "w") as fh:
        json.dump(answer, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
