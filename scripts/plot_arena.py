"""Plot an arena run's scores over rounds: arena.png and arena.svg in its folder.

    python scripts/plot_arena.py runs/<arena run>
    python scripts/plot_arena.py --help

The work is in engine/plots/ (engine/plots/arena.py); this is the entry point.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.plots.cli import arena_main

if __name__ == "__main__":
    sys.exit(arena_main())
