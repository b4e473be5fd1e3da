"""`python -m engine.search`: parse the command line, build the run, start it."""

from __future__ import annotations

import sys

from engine.front.cli import main

if __name__ == "__main__":
    sys.exit(main())
