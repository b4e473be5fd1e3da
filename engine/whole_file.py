"""Files that appear whole or not at all: written beside their target under a hidden name, then renamed onto it.

A reader (the live page reading an answer, a user opening a report or a trace file while it is written, a
crash half-way) never sees a part: `os.replace` is atomic within one folder.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def written_whole(target: Path) -> Iterator[Path]:
    """A scratch path beside `target` (same folder, same suffix) for the block to write; renamed onto `target`
    when the block ends, removed when it raises. The folder must exist; OSError as the filesystem says."""
    handle, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=target.suffix, dir=target.parent)
    os.close(handle)
    scratch = Path(name)
    try:
        yield scratch
        os.replace(scratch, target)
    finally:
        scratch.unlink(missing_ok=True)


def write_text_whole(target: Path, text: str) -> None:
    """`target.write_text(text)`, whole or not at all."""
    with written_whole(target) as scratch:
        scratch.write_text(text, encoding="utf-8")
