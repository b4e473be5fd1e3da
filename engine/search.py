"""`python -m engine.search`: parse the command line, build the run, start it."""

from __future__ import annotations

import sys


def main() -> int:
    from clade.shadowing import hidden_package

    hidden = hidden_package()  # before the engine imports the packages it names
    if hidden:
        print(f"error: {hidden}", file=sys.stderr)
        return 2
    from engine.front.cli import main as search_main

    return search_main()


if __name__ == "__main__":
    sys.exit(main())
