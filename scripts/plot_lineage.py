"""Plot a run's lineage tree: lineage.png and lineage.svg (hover a node in the SVG).

    python scripts/plot_lineage.py runs/<run-id>                 # into the run's folder
    python scripts/plot_lineage.py --help

The work is in engine/plots/ (data functions and renderers); this is the entry point.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.plots.cli import lineage_main

if __name__ == "__main__":
    sys.exit(lineage_main())
