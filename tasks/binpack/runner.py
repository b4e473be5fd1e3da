"""Runs inside the sandbox: load the agent, pack the instance, write the answer.

Standalone on purpose (it is copied into the sandbox beside the agent): it
imports only numpy and the packing module copied with it. Whatever it or the
agent prints is just text; the engine grades `answer.json` outside.
"""

import importlib.util
import json
import sys

import clade_packing
import numpy as np


def main() -> int:
    with open("instance.json") as fh:
        instance = json.load(fh)
    spec = importlib.util.spec_from_file_location("agent", "agent.py")
    assert spec is not None and spec.loader is not None  # a .py file always has one
    agent = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(agent)
    with np.errstate(all="ignore"):
        chosen = clade_packing.pack_online(agent.priority, instance["capacity"], instance["items"])
    with open("answer.json", "w") as fh:
        json.dump([int(b) for b in chosen], fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
