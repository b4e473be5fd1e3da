"""`python -m clade`: the same as the `clade` command."""

from __future__ import annotations

import sys

if __name__ == "__main__":
    from clade.shadowing import hidden_package

    hidden = hidden_package()  # before clade.cli imports the engine
    if hidden:
        print(f"error: {hidden}", file=sys.stderr)
        sys.exit(2)
    from clade.cli import main

    sys.exit(main())
