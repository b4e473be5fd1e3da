"""Write a run's HTML report: one self-contained file (no network), the lineage tree clickable.

    python scripts/report.py runs/<run-id>                 # -> runs/<run-id>/report.html
    python scripts/report.py runs/<run-id> --out r.html

The work is in engine/report/ (data, tree, page); this is the entry point.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.report import main

if __name__ == "__main__":
    sys.exit(main())
