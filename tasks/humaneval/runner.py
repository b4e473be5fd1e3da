"""Runs inside the sandbox: load the agent, ask it for the problem's code, write the answer.

Standalone on purpose (copied into the sandbox beside the agent and clade_llm.py).
The problem holds the task id, the prompt (signature and docstring) and the
entry point, never the tests. Whatever the agent prints is just text; the
engine grades answer.json outside, by running the tests in a fresh sandbox.
"""

import importlib.util
import json
import sys


def main() -> int:
    with open("problem.json", encoding="utf-8") as fh:
        problem = json.load(fh)
    spec = importlib.util.spec_from_file_location("agent", "agent.py")
    assert spec is not None and spec.loader is not None  # a .py file always has one
    agent = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(agent)
    code = agent.solve(dict(problem))
    if not isinstance(code, str):
        print(f"solve() returned {type(code).__name__}, not the code as a str", file=sys.stderr)
        return 1
    with open("answer.json", "w", encoding="utf-8") as fh:
        json.dump({"completion": code}, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
