"""`python -m engine.snapshot`: export, verify or restore a run's snapshot (engine/front/snapshot.py)."""

from __future__ import annotations

import sys

from engine.front.snapshot import main

if __name__ == "__main__":
    sys.exit(main())
