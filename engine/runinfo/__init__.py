"""What `python -m engine.runs` knows about runs: read-only questions to archives (reading.py),
per-run facts (info.py), rich tables (tables.py) and the command line (cli.py).

Light on import: rich and the archive are loaded when a command runs.
"""

from __future__ import annotations
