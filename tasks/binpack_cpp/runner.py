"""Runs inside the sandbox: build agent.cpp with g++, run it on the instance, write answer.json.

Standalone on purpose (copied into the sandbox beside the agent; standard
library only). Two limits, each its own: the build may take `build_s`
seconds, the program `run_s` (limits.json, written by the task; BUILD_S and
RUN_S without it); either one exceeded, a failed build or a failed run makes
the answer {"error": "..."}, which the evaluator turns into a failed
evaluation whose feedback is that message. On success the answer is the
program's bin indices as a JSON list; nothing here checks them, the evaluator
does, outside the sandbox. Each step runs in its own process group so that a
timeout ends the compiler's children (cc1plus, as, ld) too.
"""

import json
import os
import signal
import subprocess
import sys

BUILD_S = 30.0  # g++ -O2 on a one-file program takes about 0.5 s on this project's machines
RUN_S = 10.0  # the seed packs 1,000 items in a few milliseconds
BUILD_COMMAND = ["g++", "-O2", "-std=c++17", "-o", "agent", "agent.cpp"]
FEEDBACK_CHARS = 600


def run(command, timeout, stdin_text=""):
    """(exit code, stdout, stderr), or None when `timeout` seconds passed (the whole group is killed)."""
    proc = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(stdin_text, timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.communicate()
        return None
    return proc.returncode, out, err


def build_errors(stderr):
    """The compiler's first error lines: what a mutator (or a model) needs to see, not the notes that follow."""
    lines = [line for line in stderr.splitlines() if "error" in line] or stderr.strip().splitlines()
    return " | ".join(lines[:3])[:FEEDBACK_CHARS]


def answer_for(instance, build_s=BUILD_S, run_s=RUN_S):
    """Build agent.cpp in the working folder, run it on `instance`: a list of bin indices or {"error": why}."""
    built = run(BUILD_COMMAND, build_s)
    if built is None:
        return {"error": f"build failed: g++ took more than the build limit of {build_s:g} s"}
    code, _, err = built
    if code != 0:
        return {"error": "build failed: " + (build_errors(err) or f"g++ exited {code}")}
    ran = run(["./agent"], run_s, program_input(instance))
    if ran is None:
        return {"error": f"run failed: the program ran more than the run limit of {run_s:g} s"}
    return answer_of(*ran)


def program_input(instance):
    """What the program reads on stdin: "capacity n", then the n item sizes, one a line."""
    items = instance["items"]
    return f"{float(instance['capacity'])!r} {len(items)}\n" + "\n".join(repr(float(x)) for x in items) + "\n"


def answer_of(code, out, err):
    """The answer for a finished run: its bin indices, or what went wrong."""
    if code != 0:
        tail = err.strip().splitlines()[-1:] or [""]
        return {"error": f"run failed: the program exited {code} {tail[0][:200]}".rstrip()}
    try:
        return [int(token) for token in out.split()]
    except ValueError:
        return {"error": "run failed: the program printed something that is not a bin index"}


def main():
    with open("instance.json") as fh:
        instance = json.load(fh)
    limits = {}
    if os.path.exists("limits.json"):
        with open("limits.json") as fh:
            limits = json.load(fh)
    answer = answer_for(instance, float(limits.get("build_s", BUILD_S)), float(limits.get("run_s", RUN_S)))
    with open("answer.json", "w") as fh:
        json.dump(answer, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
