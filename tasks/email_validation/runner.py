"""Runs inside the sandbox: load the agent, call `is_valid` on each address of the batch, write the answers.

Standalone on purpose (copied into the sandbox beside the agent; stdlib only).
It gets the addresses, never their labels. An address whose call raises or
returns something other than a bool is answered null, a wrong answer, so one
bad address costs one point, not the batch. Whatever anything prints is just
text; the engine grades answer.json outside.
"""

import importlib.util
import json
import sys
import traceback


def main() -> int:
    with open("addresses.json", encoding="utf-8") as fh:
        addresses = json.load(fh)["addresses"]
    spec = importlib.util.spec_from_file_location("agent", "agent.py")
    assert spec is not None and spec.loader is not None  # a .py file always has one
    agent = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(agent)
    answers = []
    errors = []
    for i, address in enumerate(addresses):
        try:
            value = agent.is_valid(address)
        except Exception as exc:  # noqa: BLE001 - the agent's bug is this address's wrong answer
            value = None
            errors.append({"index": i, "error": f"{type(exc).__name__}: {exc}"[:200]})
            if len(errors) <= 3:
                traceback.print_exc(limit=3)
        if not isinstance(value, bool):
            if value is not None:
                errors.append({"index": i, "error": f"returned {type(value).__name__}, not bool"})
            value = None
        answers.append(value)
    with open("answer.json", "w", encoding="utf-8") as fh:
        json.dump({"answers": answers, "errors": errors[:50]}, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
