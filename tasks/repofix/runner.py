"""Runs inside the sandbox: load the coding agent, let it fix the repository in repo/, write the answer.

Standalone on purpose (copied into the sandbox beside the agent and clade_llm.py); Polyglot's runner too.
problem.json holds the instance id, the issue's text, the workspace ("repo"),
the visible tests' command and where the agent may log its steps
(trajectory.jsonl); never the hidden tests. answer.json is written whatever
the agent does (raises, exits), so a half-fixed repository is still graded:
the engine runs the hidden tests on it outside, in a fresh sandbox.
"""

import importlib.util
import json
import os
import re
import shlex
import sys

MAX_FILES = 200
MAX_BYTES = 2**20
MAX_STEPS = 200
MAX_VALUE = 1000


def run_agent(here, problem):
    """(summary, error): the agent's return value as text and what it raised, one line each."""
    try:
        if here not in sys.path:
            sys.path.insert(0, here)  # a multi-file agent imports its own modules
        spec = importlib.util.spec_from_file_location("agent", os.path.join(here, "agent.py"))
        assert spec is not None and spec.loader is not None  # a .py file always has one
        agent = importlib.util.module_from_spec(spec)
        sys.modules["agent"] = agent
        spec.loader.exec_module(agent)
        value = agent.solve(dict(problem))
        return ("" if value is None else str(value)[:1000]), ""
    except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt too: the repo is still graded
        text = " ".join(str(exc).split())
        return "", f"{type(exc).__name__}: {text}"[:1000] if text else type(exc).__name__


def repo_files(root, returned=None):
    """{relative path: text} of the repository's text files (no caches, no links), within the size caps;
    `returned`: a pattern the relative paths must match (the files grading reads: Polyglot's solution files)."""
    files: dict[str, str] = {}  # local annotations: never evaluated, whatever the job's Python
    total = 0
    wanted = re.compile(returned) if returned else None
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not os.path.islink(os.path.join(folder, d)))
        for name in sorted(names):
            path = os.path.join(folder, name)
            if name.endswith((".pyc", ".pyo")) or os.path.islink(path) or not os.path.isfile(path):
                continue
            relative = os.path.relpath(path, root).replace(os.sep, "/")
            if wanted is not None and not wanted.fullmatch(relative):
                continue
            try:
                with open(path, "rb") as fh:
                    data = fh.read(MAX_BYTES + 1)
                text = data.decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if len(files) >= MAX_FILES or total + len(data) > MAX_BYTES:
                return files
            files[relative] = text
            total += len(data)
    return files


def _short(value):
    if isinstance(value, str):
        return value[:MAX_VALUE]
    text = json.dumps(value, default=str)
    return value if len(text) <= MAX_VALUE else text[:MAX_VALUE]


def trajectory(path):
    """The agent's logged steps: one JSON object per line, unreadable lines skipped, values truncated."""
    steps: list[dict[str, object]] = []
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if len(steps) >= MAX_STEPS:
                    break
                try:
                    step = json.loads(line)
                except ValueError:
                    continue
                if isinstance(step, dict):
                    steps.append({str(k)[:MAX_VALUE]: _short(v) for k, v in step.items()})
    except OSError:
        pass
    return steps


def main():
    here = os.path.abspath(os.getcwd())
    with open(os.path.join(here, "problem.json"), encoding="utf-8") as fh:
        problem = json.load(fh)
    if problem.get("test_script"):  # Polyglot: the tests run by the interpreter running this job, wherever it is
        script = os.path.join(here, problem["test_script"])
        problem["test_command"] = f"{shlex.quote(sys.executable)} {shlex.quote(script)} --workspace"
    summary, error = run_agent(here, problem)
    answer = {
        "files": repo_files(os.path.join(here, problem["workspace"]), problem.get("returned")),
        "summary": summary,
        "error": error,
        "trajectory": trajectory(os.path.join(here, problem["trajectory_file"])),
    }
    path = os.path.join(here, "answer.json")
    if os.path.lexists(path):
        os.unlink(path)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(answer, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
