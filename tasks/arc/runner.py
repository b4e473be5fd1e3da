"""Runs inside the sandbox: load the agent, ask it for each test input's output grid, write the answer.

Standalone on purpose (copied into the sandbox beside the agent and clade_llm.py).
task.json holds the training pairs and the test inputs, never the test outputs;
the engine compares answer.json with them outside.
"""

import importlib.util
import json
import sys


def _plain(value):
    """numpy integers in a grid become ints; anything else is not a grid cell."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"a grid cell of type {type(value).__name__}")


def main() -> int:
    with open("task.json", encoding="utf-8") as fh:
        task = json.load(fh)
    spec = importlib.util.spec_from_file_location("agent", "agent.py")
    assert spec is not None and spec.loader is not None  # a .py file always has one
    agent = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(agent)
    train_pairs = [(pair["input"], pair["output"]) for pair in task["train"]]
    grids = []
    for test_input in task["test"]:
        grid = agent.solve([(a, b) for a, b in train_pairs], test_input)
        if hasattr(grid, "tolist"):  # a numpy array
            grid = grid.tolist()
        grids.append(grid)
    with open("answer.json", "w", encoding="utf-8") as fh:
        json.dump(grids, fh, default=_plain)
    return 0


if __name__ == "__main__":
    sys.exit(main())
