"""Errors a user can cause by pointing at the wrong archive; each says what to do in one line."""

from __future__ import annotations


class ArchiveError(Exception):
    """The path is not a usable archive."""


class ArchiveLocked(ArchiveError):
    """Another process holds the archive open for writing (DuckDB allows one writer)."""


class ArchiveDamaged(ArchiveError):
    """A Clade archive DuckDB cannot read whole (a file cut short, blocks overwritten)."""


class ArchiveSchemaError(ArchiveError):
    """The archive was written by a newer schema than this code knows."""
