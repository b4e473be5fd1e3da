"""Runs inside the sandbox: load the tester, call `propose(n, seed)`, write its proposals.

Standalone on purpose (copied into the sandbox beside tester.py; stdlib only).
Whatever the tester returns is only a proposal: the engine's oracle decides,
outside. Anything that is not JSON is written as its repr, and refused there.
"""

import importlib.util
import json
import sys


def main() -> int:
    with open("arena_round.json", encoding="utf-8") as fh:
        asked = json.load(fh)
    spec = importlib.util.spec_from_file_location("tester", "tester.py")
    assert spec is not None and spec.loader is not None  # a .py file always has one
    tester = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tester)
    proposals = list(tester.propose(asked["n"], asked["seed"]))[: asked["n"]]
    with open("proposals.json", "w", encoding="utf-8") as fh:
        json.dump({"proposals": proposals}, fh, default=repr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
