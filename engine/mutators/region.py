"""The part of the entry file a mutator may change, and how to write it back.

Without markers the mutable region is the entry function's body after its
docstring (the def line, decorators and docstring stay byte for byte; a
one-line def is rewritten whole). With
`# EVOLVE-BLOCK-START` / `# EVOLVE-BLOCK-END` comment lines (the convention of
AlphaEvolve and OpenEvolve) it is the whole statements between the first
START and the END after it; everything outside is kept byte for byte.

The region is written back with `ast.unparse`, so comments inside it are lost;
text outside the region is untouched.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from engine.mutators.base import MutationError

START = "EVOLVE-BLOCK-START"
END = "EVOLVE-BLOCK-END"


@dataclass(frozen=True)
class Region:
    stmts: tuple[ast.stmt, ...]  # the region's statements, nodes of the parsed file
    first_line: int  # 1-based, inclusive: the lines the unparsed region replaces
    last_line: int
    indent: str  # leading whitespace of the region's statements
    marked: bool  # True when EVOLVE-BLOCK markers define it
    enclosing: ast.FunctionDef | ast.AsyncFunctionDef | None  # innermost def around a marked region


MARKER_COMMENTS = ("#", "//", "!", "--")
# the nodes of a signature that carry a position (its arguments, their annotations and defaults)
_PLACED = (ast.arg, ast.expr, ast.keyword)


def marker_lines(lines: list[str], where: str = "") -> tuple[int, int] | None:
    """(START line, END line), 1-based, of the first marked block; None without a START comment.

    Markers are comment lines holding EVOLVE-BLOCK-START / -END: the first START
    and the first END after it. A START with no END is a MutationError. Comment lines of the other
    languages count too (`//`, `!`, `--`: engine/lang), so a C++ or Fortran program's block is found."""
    start = end = None
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text.startswith(MARKER_COMMENTS):
            continue
        if start is None and START in text:
            start = number
        elif start is not None and END in text:
            end = number
            break
    if start is None:
        return None
    if end is None:
        raise MutationError(f"{START} at line {start}{where} has no {END} after it")
    return start, end


def _bodies(tree: ast.AST):
    """Every statement list in the tree, outer ones first, with the innermost def owning it."""
    stack: list[tuple[ast.AST, ast.AST | None]] = [(tree, None)]
    while stack:
        node, owner = stack.pop(0)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            owner = node
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block, owner
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.stmt, ast.ExceptHandler, ast.match_case)):
                stack.append((child, owner))


def _function_region(lines: list[str], tree: ast.Module, entry_function: str) -> Region:
    func = None
    for node in tree.body:  # the last definition is the one Python keeps
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == entry_function:
            func = node
    if func is None:
        raise MutationError(f"entry function {entry_function} not found at top level")
    body = func.body
    has_doc = (
        isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    )
    stmts = body[1:] if has_doc else body
    if not stmts:
        raise MutationError(f"entry function {entry_function} has no statement besides its docstring")
    previous_end = (body[0].end_lineno or func.lineno) if has_doc else func.lineno
    header_end = max([func.lineno] + [a.end_lineno or a.lineno for a in ast.walk(func.args) if isinstance(a, _PLACED)])
    if func.returns is not None:
        header_end = max(header_end, func.returns.end_lineno or header_end)
    if stmts[0].lineno > max(previous_end, header_end):
        first = stmts[0]
        indent = lines[first.lineno - 1][: first.col_offset]
        return Region(tuple(stmts), first.lineno, func.end_lineno or first.lineno, indent, False, func)
    # a one-line def or statements sharing the docstring's line: rewrite the whole def
    first_line = min([func.lineno] + [d.lineno for d in func.decorator_list])
    return Region((func,), first_line, func.end_lineno or func.lineno, "", False, None)


def find_region(source: str, tree: ast.Module, entry_function: str) -> Region:
    """Locate the mutable region of a parsed entry file, or raise `MutationError`."""
    lines = source.splitlines()
    markers = marker_lines(lines)
    if markers is None:
        return _function_region(lines, tree, entry_function)
    start, end = markers
    for block, owner in _bodies(tree):
        inside = [s for s in block if start < s.lineno and (s.end_lineno or s.lineno) < end]
        if not inside:
            continue
        for s in block:
            s_end = s.end_lineno or s.lineno
            overlaps = s.lineno <= end and s_end >= start
            if overlaps and s not in inside:
                raise MutationError(
                    f"EVOLVE-BLOCK markers (lines {start}-{end}) split the statement at line {s.lineno}"
                )
        positions = [block.index(s) for s in inside]
        if positions != list(range(positions[0], positions[0] + len(positions))):
            raise MutationError("EVOLVE-BLOCK statements are not contiguous")
        first_stmt = inside[0]
        indent = lines[first_stmt.lineno - 1][: first_stmt.col_offset]
        return Region(tuple(inside), start + 1, end - 1, indent, True, owner)
    raise MutationError(f"EVOLVE-BLOCK (lines {start}-{end}) holds no statement")


def splice(source: str, region: Region, new_stmts: list[ast.stmt]) -> str:
    """The file with the region's lines replaced by the unparsed statements."""
    lines = source.splitlines(keepends=True)
    text = ast.unparse(ast.Module(body=new_stmts, type_ignores=[]))
    body = "".join(region.indent + line + "\n" if line.strip() else "\n" for line in text.split("\n"))
    head, tail = lines[: region.first_line - 1], lines[region.last_line :]
    if head and not head[-1].endswith("\n"):
        head[-1] += "\n"
    return "".join(head) + body + "".join(tail)
