"""Questions about the tree's nodes and their files (tables nodes, node_files, blobs)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from archive.reader import Reader, marks
from archive.records import NodeRecord

_NODE_COLUMNS = (
    "id, parent_id, depth, status, mutator, model, diff, code_hash, reason, description, coalesce(role, 'agent')"
)


def _record(row: tuple) -> NodeRecord:
    n, parent, depth, status, mutator, model, diff, code_hash, reason, description, role = row
    return NodeRecord(n, parent, depth, status, mutator, model, diff, code_hash, reason, description, role=role)


class NodeReads(Reader):
    def nodes(self) -> list[NodeRecord]:
        """Every node, in id order."""
        return [_record(row) for row in self._rows(f"SELECT {_NODE_COLUMNS} FROM nodes ORDER BY id")]

    def node(self, node_id: int) -> NodeRecord | None:
        """One node, or None when the run has no such node."""
        row = self._row(f"SELECT {_NODE_COLUMNS} FROM nodes WHERE id = ?", [node_id])
        return None if row is None else _record(row)

    def children(self, parent: int) -> list[NodeRecord]:
        """The children stored from `parent`, oldest first."""
        rows = self._rows(f"SELECT {_NODE_COLUMNS} FROM nodes WHERE parent_id = ? ORDER BY id", [parent])
        return [_record(row) for row in rows]

    def last_node_id(self) -> int | None:
        """The highest node id (None: no node yet)."""
        value = self._value("SELECT max(id) FROM nodes")
        return None if value is None else int(value)

    def next_node_id(self) -> int:
        """The id the next stored node takes."""
        return int(self._value("SELECT coalesce(max(id), -1) + 1 FROM nodes"))

    def node_status_counts(self) -> dict[str, int]:
        """{status: nodes}, statuses in order."""
        rows = self._rows("SELECT status, count(*) FROM nodes GROUP BY status ORDER BY status")
        return {str(status): int(n) for status, n in rows}

    def invalid_count(self, reason_like: str) -> int:
        """Invalid nodes whose reason matches the LIKE pattern (e.g. 'duplicate of node%')."""
        return int(self._value("SELECT count(*) FROM nodes WHERE status = 'invalid' AND reason LIKE ?", [reason_like]))

    def node_parents(self) -> dict[int, int | None]:
        """{node: its parent (None for a root)}, in id order."""
        rows = self._rows("SELECT id, parent_id FROM nodes ORDER BY id")
        return {int(n): None if p is None else int(p) for n, p in rows}

    def node_descriptions(self, ids: Sequence[int]) -> dict[int, str | None]:
        """{node: its description} of these nodes (those the run has)."""
        if not ids:
            return {}
        rows = self._rows(f"SELECT id, description FROM nodes WHERE id IN ({marks(ids)})", list(ids))
        return {int(n): text for n, text in rows}

    def node_notes(self, ids: Sequence[int] | None = None) -> dict[int, str]:
        """Improvement notes by node (of these nodes, or every node's); {} for an archive older than the column."""
        if not self.has_column("nodes", "note"):
            return {}
        if ids is None:
            rows = self._rows("SELECT id, note FROM nodes WHERE note <> ''")
        elif not ids:
            return {}
        else:
            rows = self._rows(f"SELECT id, note FROM nodes WHERE note <> '' AND id IN ({marks(ids)})", list(ids))
        return {int(n): text for n, text in rows}

    def node_timeline(self) -> list[tuple[int, int | None, str, datetime | None]]:
        """(id, parent, status, created_at) of every node, in id order."""
        rows = self._rows("SELECT id, parent_id, status, created_at FROM nodes ORDER BY id")
        return [(int(a), None if b is None else int(b), str(c), d) for a, b, c, d in rows]

    def node_outlines(self) -> list[tuple[int, int | None, int, str, str, str]]:
        """(id, parent, depth, status, description, reason) of every node in id order; '' for no text."""
        rows = self._rows(
            "SELECT id, parent_id, depth, status, coalesce(description, ''), coalesce(reason, '') "
            "FROM nodes ORDER BY id"
        )
        return [(int(n), None if p is None else int(p), int(d), str(s), t, r) for n, p, d, s, t, r in rows]

    def valid_node_files(self) -> list[tuple[int, dict[str, str]]]:
        """Every valid node's files, in node order (one query, for indexes rebuilt on resume)."""
        rows = self._rows(
            "SELECT f.node_id, f.path, b.content FROM node_files f JOIN blobs b ON b.hash = f.hash "
            "JOIN nodes n ON n.id = f.node_id WHERE n.status = 'valid' ORDER BY f.node_id, f.path"
        )
        out: dict[int, dict[str, str]] = {}
        for node, path, content in rows:
            out.setdefault(int(node), {})[path] = content
        return list(out.items())

    def node_files(self, node_id: int) -> dict[str, str]:
        """{path: text} of one node's files."""
        rows = self._rows(
            "SELECT f.path, b.content FROM node_files f JOIN blobs b ON b.hash = f.hash "
            "WHERE f.node_id = ? ORDER BY f.path",
            [node_id],
        )
        return dict(rows)

    def code_sizes(self) -> dict[int, int]:
        """Each node's code size in bytes (UTF-8, all its files): the feature some policies sort agents by."""
        rows = self._rows(
            "SELECT f.node_id, sum(strlen(b.content)) FROM node_files f "
            "JOIN blobs b ON b.hash = f.hash GROUP BY f.node_id"
        )
        return {int(node): int(size) for node, size in rows}
