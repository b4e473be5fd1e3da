"""The archive's schema reference (docs/reference/schema.md), read from the DDL that archive/schema.py holds.

The DDL is what every archive is created with, so the page lists exactly the tables and columns a user
can query: each column's type, whether it may be NULL, its default and key; the table's own constraints;
which tables an older archive may lack and which columns a migration adds to one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from markdown_text import cell, code

_TABLE = re.compile(r"CREATE TABLE IF NOT EXISTS (\w+) \((.*?)\n\);", re.DOTALL)
_COLUMN = re.compile(r'^("?\w+"?) (\w+(?:\([\d, ]+\))?)(.*)$')
_DEFAULT = re.compile(r"\bDEFAULT ('[^']*'|\S+)")
_ADDED = re.compile(r"ALTER TABLE (\w+) ADD COLUMN IF NOT EXISTS (\w+)")
_TABLE_CONSTRAINTS = ("PRIMARY KEY", "UNIQUE", "CHECK", "FOREIGN KEY")


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    nullable: bool
    default: str | None
    primary_key: bool


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[Column, ...]
    constraints: tuple[str, ...]  # table constraints as written: UNIQUE (...), PRIMARY KEY (...)


def _column(line: str) -> Column:
    match = _COLUMN.match(line)
    if match is None:
        raise ValueError(f"archive/schema.py: cannot read the column definition {line!r}")
    name, type_, rest = match.groups()
    default = _DEFAULT.search(rest)
    return Column(
        name=name.strip('"'),
        type=type_,
        nullable="NOT NULL" not in rest and "PRIMARY KEY" not in rest,
        default=default.group(1) if default else None,
        primary_key="PRIMARY KEY" in rest,
    )


def parse_tables(ddl: str) -> list[Table]:
    """Every CREATE TABLE of `ddl`, in order: one column or table constraint a line, as the module writes them."""
    tables = []
    for name, body in _TABLE.findall(ddl):
        columns, constraints = [], []
        for raw in body.splitlines():
            line = raw.strip().rstrip(",")
            if not line:
                continue
            if line.upper().startswith(_TABLE_CONSTRAINTS):
                constraints.append(line)
            else:
                columns.append(_column(line))
        tables.append(Table(name, tuple(columns), tuple(constraints)))
    return tables


def added_columns(migrations: tuple[str, ...]) -> set[tuple[str, str]]:
    """(table, column) of each column a migration adds to an archive made before it."""
    return {match for statement in migrations for match in _ADDED.findall(statement)}


def render(tables: list[Table], optional: frozenset[str], added: set[tuple[str, str]]) -> list[str]:
    lines: list[str] = []
    for table in tables:
        lines += [f"## {table.name}", ""]
        if table.name in optional:
            lines += ["May be absent from an archive or snapshot made before it (added by a migration).", ""]
        lines += ["| Column | Type | NULL | Default | Note |", "| --- | --- | --- | --- | --- |"]
        for column in table.columns:
            notes = ["primary key"] if column.primary_key else []
            if (table.name, column.name) in added:
                notes.append("added to older archives when they are opened for writing")
            default = code(column.default) if column.default is not None else ""
            nullable = "yes" if column.nullable else "no"
            lines.append(
                f"| {code(column.name)} | {code(column.type)} | {nullable} | {default} | {cell('; '.join(notes))} |"
            )
        lines.append("")
        lines += [f"Constraint: {code(constraint)}" for constraint in table.constraints]
        lines += [""] if table.constraints else []
    return lines


def schema_markdown() -> str:
    from archive import schema

    tables = parse_tables(schema.TABLES)
    if not tables:
        raise ValueError("archive/schema.py: no CREATE TABLE found in TABLES")
    lines = [f"Schema version: {code(str(schema.SCHEMA_VERSION))}.", ""]
    lines += render(tables, schema.OPTIONAL_TABLES, added_columns(schema.MIGRATIONS))
    return "\n".join(lines)
