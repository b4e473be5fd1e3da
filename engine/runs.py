"""`python -m engine.runs`: look at runs through their archives (list, show, best, compare).

Only the command-line entry; the work is in engine/runinfo/ (reading, data, rich tables).
"""

from __future__ import annotations

import sys

from engine.runinfo.cli import main

if __name__ == "__main__":
    sys.exit(main())
