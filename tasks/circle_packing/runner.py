"""Runs inside the sandbox: load the agent, call `construct()`, write the packing to answer.json.

Standalone on purpose (copied into the sandbox beside the agent): it checks
nothing. Whatever it or the agent prints is just text; the engine checks
`answer.json` outside the sandbox.
"""

import importlib.util
import json
import sys

import numpy as np


def main() -> int:
    spec = importlib.util.spec_from_file_location("agent", "agent.py")
    assert spec is not None and spec.loader is not None  # a .py file always has one
    agent = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(agent)
    with np.errstate(all="ignore"):
        centers, radii = agent.construct()
    answer = {"centers": np.asarray(centers, dtype=float).tolist(), "radii": np.asarray(radii, dtype=float).tolist()}
    with open("answer.json", "w") as fh:
        json.dump(answer, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
