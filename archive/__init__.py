"""The DuckDB archive: the single source of truth of a run (docs/design.md, "The data model: the archive")."""

from __future__ import annotations

from archive.errors import ArchiveDamaged, ArchiveError, ArchiveFull, ArchiveLocked, ArchiveSchemaError
from archive.records import EvaluationRecord, LLMCallRecord, LLMTotals, NodeRecord, NodeStats, ReferenceEvaluation
from archive.schema import SCHEMA_VERSION
from archive.store import Archive, archive_path

__all__ = [
    "Archive",
    "ArchiveDamaged",
    "ArchiveError",
    "ArchiveFull",
    "ArchiveLocked",
    "ArchiveSchemaError",
    "EvaluationRecord",
    "LLMCallRecord",
    "LLMTotals",
    "NodeRecord",
    "NodeStats",
    "ReferenceEvaluation",
    "SCHEMA_VERSION",
    "archive_path",
]
