"""Plot runs' progress, overlaid: progress.png and progress.svg.

    python scripts/plot_progress.py runs/<a> runs/<b> runs/<c>    # into the current folder
    python scripts/plot_progress.py --help

The work is in engine/plots/ (data functions and renderers); this is the entry point.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.plots.cli import progress_main

if __name__ == "__main__":
    sys.exit(progress_main())
