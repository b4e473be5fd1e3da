"""The archive owns its SQL: no SQL text reaches a `query`/`execute` call outside `archive/`.

Walks the syntax tree of every module in engine/, search/, tasks/ and scripts/ and fails on a call
`<anything>.query(...)`, `.execute(...)` or `.executemany(...)` whose first argument is SQL text: a string,
an f-string, a concatenation or a `.format()` of one, or a name bound to such text in the same module, that
begins with a SQL keyword. Other `query` methods (datasketch's `MinHashLSH.query(minhash)` in
engine/mutators/novelty.py) take no text and are not flagged. The one exception is the user's read-only
`runs sql` command (engine/runinfo/sql.py), which runs what the user types.

A second check: no private attribute of an archive (`archive._con`, `archive._next_seq`, ...) is used
outside archive/.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from engine.pyast import parse  # ast.parse that survives other threads' parses (cpython#106905)

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("engine", "search", "tasks", "scripts")
ALLOWED = {"engine/runinfo/sql.py"}
CALLS = {"query", "execute", "executemany"}
SQL = re.compile(
    r"^\s*\(?\s*(SELECT|WITH|INSERT|UPDATE|DELETE|CREATE|ALTER|DROP|BEGIN|COMMIT|ROLLBACK|CHECKPOINT|DESCRIBE|"
    r"PRAGMA|SET|ATTACH|DETACH|COPY|EXPLAIN|PREPARE|EXECUTE|SHOW|VACUUM|SUMMARIZE|FROM|INSTALL|LOAD|USE)\b",
    re.IGNORECASE,
)
ARCHIVE_NAMES = re.compile(r"(^|\.)(archive|original)$")


def _leading_text(node: ast.AST, bound: dict[str, list[ast.AST]], seen: frozenset[str] = frozenset()) -> list[str]:
    """The texts an expression may begin with: a string's, an f-string's first part, the left operand of a
    concatenation, the receiver of `.format()`, or what a name of the module is bound to."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        first = node.values[0] if node.values else None
        return [first.value] if isinstance(first, ast.Constant) and isinstance(first.value, str) else []
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        return _leading_text(node.left, bound, seen)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return _leading_text(node.func.value, bound, seen)
    if isinstance(node, ast.Name) and node.id in bound and node.id not in seen:
        return [text for value in bound[node.id] for text in _leading_text(value, bound, seen | {node.id})]
    return []


def _bindings(tree: ast.AST) -> dict[str, list[ast.AST]]:
    """Every value a plain name is assigned anywhere in the module (any scope: a reader may hoist SQL)."""
    bound: dict[str, list[ast.AST]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, []).append(node.value)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name) and node.value:
            bound.setdefault(node.target.id, []).append(node.value)
    return bound


def _modules(root: Path = ROOT) -> Iterator[tuple[str, ast.AST]]:
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if rel not in ALLOWED:
                yield rel, parse(path.read_text(encoding="utf-8"), filename=rel)


def sql_calls(root: Path = ROOT) -> list[str]:
    """'path:line: receiver.query(...)' of each call that passes SQL text, outside the allowed places."""
    found = []
    for rel, tree in _modules(root):
        bound = _bindings(tree)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args):
                continue
            if node.func.attr in CALLS and any(SQL.match(t) for t in _leading_text(node.args[0], bound)):
                found.append(f"{rel}:{node.lineno}: {ast.unparse(node.func)}(...)")
    return found


def private_archive_uses(root: Path = ROOT) -> list[str]:
    """'path:line: archive._x' of each private attribute of an archive used outside archive/."""
    found = []
    for rel, tree in _modules(root):
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and ARCHIVE_NAMES.search(ast.unparse(node.value))
            ):
                found.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_sql_text_is_passed_to_query_or_execute_outside_the_archive() -> None:
    found = sql_calls()
    assert not found, "SQL outside archive/ (give the archive a named method):\n" + "\n".join(found)


def test_no_private_attribute_of_an_archive_is_used_outside_it() -> None:
    found = private_archive_uses()
    assert not found, "private archive attributes used outside archive/:\n" + "\n".join(found)


def test_the_check_catches_every_form_of_sql_text(tmp_path: Path) -> None:
    """What the check must catch (and leave alone), written into a scratch tree laid out like the project."""
    (tmp_path / "engine").mkdir()
    for folder in FOLDERS[1:]:
        (tmp_path / folder).mkdir()
    (tmp_path / "engine" / "bad.py").write_text(
        "_STAMP = 'SELECT count(*) FROM nodes'\n"
        "def f(archive, con, node, split, lsh, minhash):\n"
        "    archive.query('SELECT 1')\n"
        '    archive.query(f"SELECT id FROM nodes WHERE id = {node}")\n'
        "    archive.query('SELECT score FROM evaluations WHERE split = ?' + ' ORDER BY 1', [split])\n"
        "    archive.query(_STAMP)\n"
        "    q = 'SELECT avg(score) FROM {table}'\n"
        "    con.execute(q.format(table='evaluations'))\n"
        "    con.execute('''\n        WITH t AS (SELECT 1) SELECT * FROM t''')\n"
        "    archive._con.execute('BEGIN')\n"
        "    con.executemany('INSERT INTO blobs VALUES (?, ?)', [])\n"
        "    lsh.query(minhash)\n"  # datasketch: no text
        "    archive.query(node)\n"  # not text we can see: not flagged
        "    return archive._next_seq\n"
    )
    calls = sql_calls(tmp_path)
    assert sorted(int(c.split(":")[1]) for c in calls) == [3, 4, 5, 6, 8, 9, 11, 12], calls
    assert sorted(c.split(": ")[1] for c in private_archive_uses(tmp_path)) == ["archive._con", "archive._next_seq"]
