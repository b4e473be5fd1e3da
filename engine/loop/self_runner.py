"""Runs inside the sandbox of a self-improvement (`--mutator self`): the parent agent edits a copy of itself.

Standalone on purpose (copied into the job, standard library only). The job
holds the parent's files twice: at the top (the agent that runs, beside
clade_llm.py) and under workspace/ (the copy it edits). This runner calls the
running agent's `improve(problem)` if it defines one (its own meta-code),
else its `solve(problem)`, with the problem the engine wrote
(problem.json: the statement, "workspace", the test command, the trajectory
file), whatever the agent does, then writes answer.json: every text file left
under workspace/ (the child), the agent's summary or error, and its
trajectory. The engine reads nothing else, and checks the child itself.
"""

import importlib.util
import json
import os
import sys
import traceback

MAX_FILES = 200
MAX_BYTES = 2 * 2**20
MAX_STEPS = 200
STEP_TEXT = 1000


def workspace_files(root):
    files: dict[str, str] = {}  # a local annotation: never evaluated, whatever the job's Python
    total = 0
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in sorted(names):
            if name.startswith(".") or name.endswith((".pyc", ".pyo")):
                continue
            path = os.path.join(folder, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            try:
                with open(path, encoding="utf-8") as fh:
                    text = fh.read(MAX_BYTES + 1)
            except (OSError, UnicodeDecodeError):
                continue
            total += len(text)
            if len(files) >= MAX_FILES or total > MAX_BYTES:
                return (
                    files,
                    f"the workspace holds more than {MAX_FILES} files or {MAX_BYTES} bytes: the rest is dropped",
                )
            files[os.path.relpath(path, root).replace(os.sep, "/")] = text
    return files, ""


def trajectory(path):
    steps = []
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                try:
                    step = json.loads(line)
                except ValueError:
                    continue
                if isinstance(step, dict):
                    steps.append({k: (v[:STEP_TEXT] if isinstance(v, str) else v) for k, v in step.items()})
                if len(steps) >= MAX_STEPS:
                    break
    except OSError:
        pass
    return steps


def main():
    with open("problem.json", encoding="utf-8") as fh:
        problem = json.load(fh)
    sys.path.insert(0, os.getcwd())
    summary, error = "", ""
    try:
        spec = importlib.util.spec_from_file_location("agent", problem.pop("entry_file", "agent.py"))
        assert spec is not None and spec.loader is not None  # a .py file always has one
        agent = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(agent)
        entry = problem.pop("entry_function", "solve")
        improve = getattr(agent, "improve", None)  # an agent may keep its own meta-code: its improve entry
        summary = str((improve if callable(improve) else getattr(agent, entry))(dict(problem)))[:1000]
    except BaseException as exc:  # noqa: BLE001 - the edits it made so far are still the child
        error = f"{type(exc).__name__}: {exc}".splitlines()[0][:500] if str(exc) else type(exc).__name__
        traceback.print_exc()
    files, dropped = workspace_files(problem["workspace"])
    answer = {
        "files": files,
        "summary": summary,
        "error": error or dropped,
        "trajectory": trajectory(problem.get("trajectory_file") or "trajectory.jsonl"),
    }
    with open("answer.json", "w", encoding="utf-8") as fh:
        json.dump(answer, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
