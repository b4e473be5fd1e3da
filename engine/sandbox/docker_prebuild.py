"""`python -m engine.sandbox.docker_prebuild [--compilers] [--polyglot]`: build the sandbox's images ahead of a run.

The first docker run builds them anyway (`docker_daemon.ensure_image`); this
is for CI and for a machine prepared before its runs. A current image (same
recipe digest) is found in well under a second.
"""

from __future__ import annotations

import logging
import time


def main(argv: list[str] | None = None) -> int:
    """`python -m engine.sandbox.docker_prebuild [--compilers] [--polyglot]`: build the sandbox image(s) now, or
    say they are current; one line each. Exit 2 with one line when the daemon or the build fails."""
    import argparse
    import sys

    from .docker_build import COMPILERS_IMAGE, DEFAULT_IMAGE, POLYGLOT_IMAGE
    from .docker_daemon import _connect, ensure_image

    parser = argparse.ArgumentParser(prog="python -m engine.sandbox.docker_prebuild", description=main.__doc__)
    parser.add_argument("--compilers", action="store_true", help=f"also {COMPILERS_IMAGE}")
    parser.add_argument("--polyglot", action="store_true", help=f"also {POLYGLOT_IMAGE} (Polyglot's six languages)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    client, why = _connect(60)
    if client is None:
        print(f"error: {why}", file=sys.stderr)
        return 2
    try:
        images = [DEFAULT_IMAGE] + [COMPILERS_IMAGE] * args.compilers + [POLYGLOT_IMAGE] * args.polyglot
        for image in images:
            t0 = time.monotonic()
            try:
                ensure_image(client, image)
            except RuntimeError as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 2
            print(f"{image}: ready ({time.monotonic() - t0:.1f} s)")
    finally:
        client.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
