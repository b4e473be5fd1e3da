"""Errors a user can cause by pointing at the wrong archive; each says what to do in one line."""

from __future__ import annotations

import errno


class ArchiveError(Exception):
    """The path is not a usable archive."""


class ArchiveLocked(ArchiveError):
    """Another process holds the archive open for writing (DuckDB allows one writer)."""


class ArchiveDamaged(ArchiveError):
    """A Clade archive DuckDB cannot read whole (a file cut short, blocks overwritten)."""


class ArchiveSchemaError(ArchiveError):
    """The archive was written by a newer schema than this code knows."""


class ArchiveFull(ArchiveError):
    """The device holding the archive has no space left: the write was undone; what was stored before is kept."""


def is_disk_full(exc: BaseException) -> bool:
    """Whether `exc` says the disk (or the user's quota) is full: an OSError's errno, or DuckDB's message."""
    if isinstance(exc, ArchiveFull) or (isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)):
        return True
    return "no space left on device" in str(exc).lower() or "disk quota exceeded" in str(exc).lower()


def rollback(con) -> None:
    """Undo the open transaction; DuckDB has already ended it when its commit failed (a full disk), which is fine."""
    try:
        con.execute("ROLLBACK")
    except Exception:  # noqa: BLE001, S110 - "no transaction is active": nothing left to undo
        pass
