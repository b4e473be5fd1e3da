"""Clade's runner for a rubric task folder; it runs INSIDE the sandbox, beside the candidate agent.

It runs `python benchmark.py questions.json` (questions.json holds the one
question of this evaluation: its id and text, never its checks or reference
facts), passes the output through, and takes the last line that starts with
`answers:` as the benchmark's answers (a JSON object, question id -> answer
text); anything else printed is ignored. The answer to this evaluation's
question goes to answer.json, `{"id": ..., "answer": "..."}`, or `{"error":
"..."}` saying why there is none; the engine has it graded by the judge model
outside. Standalone: the standard library only. Settings come from clade_task.json.
"""

import json
import os
import re
import subprocess
import sys

PREFIX = "answers:"


def failed_file(stderr, here):
    """The job's own file a traceback in `stderr` ends in (benchmark.py, the agent), when a module is
    missing (the engine then says which Python lacks it); '' otherwise."""
    if "No module named" not in stderr:
        return ""
    files = [os.path.abspath(os.path.join(here, f)) for f in re.findall(r'^\s*File "([^"]+)", line \d+', stderr, re.M)]
    inside = [f for f in files if os.path.dirname(f) == here]
    return os.path.basename(inside[-1]) if inside else ""


def read_answer(stdout, question_id):
    """{"id", "answer"} from the last `answers:` line, or {"error": why}."""
    lines = [line.strip() for line in stdout.splitlines() if line.strip().startswith(PREFIX)]
    if not lines:
        return {"error": "benchmark.py printed no line 'answers: {...}'"}
    try:
        answers = json.loads(lines[-1][len(PREFIX) :])
    except ValueError as exc:
        return {"error": f"the 'answers:' line is not JSON: {exc}"[:300]}
    if not isinstance(answers, dict):
        return {"error": "the 'answers:' line must hold a JSON object, question id -> answer text"}
    if question_id not in answers:
        return {"error": f"the 'answers:' line has no answer for question {question_id!r}"}
    text = answers[question_id]
    if not isinstance(text, str):
        return {"error": f"the answer to question {question_id!r} is {type(text).__name__}, not text"}
    return {"id": question_id, "answer": text}


def main():
    with open("clade_task.json") as fh:
        settings = json.load(fh)
    here = os.getcwd()
    proc = subprocess.run(
        [sys.executable, "benchmark.py", "questions.json"],
        check=False,
        cwd=here,
        capture_output=True,
        text=True,
        errors="replace",
    )
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    if proc.returncode != 0:
        lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
        answer = {
            "error": f"benchmark.py exited with {proc.returncode}" + (f": {lines[-1][:300]}" if lines else ""),
            "error_file": failed_file(proc.stderr, here),
        }
    else:
        answer = read_answer(proc.stdout, str(settings["question_id"]))
    with open("answer.json", "w") as fh:
        json.dump(answer, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
