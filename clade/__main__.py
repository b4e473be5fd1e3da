"""`python -m clade`: the same as the `clade` command."""

from __future__ import annotations

import sys

from clade.cli import main

if __name__ == "__main__":
    sys.exit(main())
