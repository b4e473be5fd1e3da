"""Which names are bound where an expression is read, in the order pyflakes reads a function.

`scope.function_bindings` counts a name bound anywhere in a function as bound
everywhere in it (never a false alarm). Crossover needs the narrower answer:
a graft reading `col` placed on a line above `col = ...` is pyflakes'
undefined name, refused by the gate after the child was made (issue 30
measured it in a third of crossover's tries on circle packing). pyflakes
visits a function's statements top to bottom, a loop's target before its
body, a `with`'s `as` names before its body, and counts an assignment's
targets after its value; bindings in one branch of an `if` count for the
text after it. This module follows that order.
"""

from __future__ import annotations

import ast

from engine.mutators.scope import function_bindings


def bound_before(stmts: list[ast.stmt], target: ast.AST) -> set[str] | None:
    """Names `stmts` bind before the point where `target` (a node under them) is read; None when it is not
    under them. A statement's bindings count once it is complete, so `x = x + 1` does not bind the `x` it
    reads."""
    bound: set[str] = set()
    for stmt in stmts:
        if holds(stmt, target):
            return bound | _inside(stmt, target)
        bound |= _binds([stmt])
    return None


def _inside(stmt: ast.stmt, target: ast.AST) -> set[str]:
    """Names `stmt`'s own parts bind before `target`, which is somewhere in `stmt`."""
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        if holds(stmt.iter, target):
            return set()
        return _in_blocks([stmt.body, stmt.orelse], target, _stored(stmt.target))
    if isinstance(stmt, (ast.While, ast.If)):
        if holds(stmt.test, target):
            return set()
        return _in_blocks([stmt.body, stmt.orelse], target, set())
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        bound: set[str] = set()
        for item in stmt.items:
            if holds(item, target):
                return bound
            if item.optional_vars is not None:
                bound |= _stored(item.optional_vars)
        return _in_blocks([stmt.body], target, bound)
    if isinstance(stmt, (ast.Try, ast.TryStar)):
        inner = bound_before(stmt.body, target)
        if inner is not None:
            return inner
        bound = _binds(stmt.body)
        for handler in stmt.handlers:
            if handler.type is not None and holds(handler.type, target):
                return bound
            named = {handler.name} if handler.name else set()
            inner = bound_before(handler.body, target)
            if inner is not None:
                return bound | named | inner
            bound |= named | _binds(handler.body)
        return _in_blocks([stmt.orelse, stmt.finalbody], target, bound)
    return set()  # an expression of a simple statement (or a block this module does not follow): nothing yet


def _in_blocks(blocks: list[list[ast.stmt]], target: ast.AST, bound: set[str]) -> set[str]:
    """`bound`, and what the blocks bind before `target`, read one after the other."""
    bound = set(bound)
    for block in blocks:
        inner = bound_before(block, target)
        if inner is not None:
            return bound | inner
        bound |= _binds(block)
    return bound


def _binds(stmts: list[ast.stmt]) -> set[str]:
    return function_bindings(ast.Module(body=stmts, type_ignores=[]))


def _stored(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def holds(node: ast.AST, target: ast.AST) -> bool:
    """Is `target` (by identity) `node` or under it?"""
    return any(n is target for n in ast.walk(node))
