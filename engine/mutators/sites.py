"""Where in a region an operator may act: expression slots and statement lists.

A slot is a place holding an expression (parent node, field, index) that an
operator may read or replace. Places where a change would too easily break
the program are not slots at all: assignment targets, subscripts' indices,
call targets, keyword arguments, arguments of calls other than known
elementwise numeric functions, exponents, comprehensions, lambdas.

A slot is `restricted` when the value must stay non-zero (a denominator, the
argument of a log) or non-negative (the argument of a sqrt): there operators
may only rescale a constant without changing its sign, so that
`c / (np.abs(x) + 1e-6)` never becomes a division by zero.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

FuncDef = ast.FunctionDef | ast.AsyncFunctionDef

ELEMENTWISE = frozenset(
    {
        "abs",
        "absolute",
        "fabs",
        "square",
        "sqrt",
        "exp",
        "log",
        "log1p",
        "log2",
        "log10",
        "expm1",
        "maximum",
        "minimum",
        "fmax",
        "fmin",
        "clip",
        "where",
        "tanh",
        "sin",
        "cos",
        "arctan",
        "sign",
        "floor",
        "ceil",
        "reciprocal",
        "negative",
        "sinh",
        "cosh",
        "arcsinh",
    }
)
NONZERO_ARGS = frozenset({"log", "log2", "log10", "reciprocal"})
NONNEG_ARGS = frozenset({"sqrt", "log1p"})
NONNEG_OUTPUT = frozenset({"abs", "absolute", "fabs", "square", "exp"})


def call_name(node: ast.AST) -> str | None:
    """`np.maximum(...)` -> "maximum", `abs(...)` -> "abs", anything else -> None."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.attr
    if isinstance(func, ast.Name) and func.id == "abs":
        return "abs"
    return None


def number_value(node: ast.AST) -> float | None:
    """The value of a numeric literal, `-3.0` (a unary minus on a literal) included."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = number_value(node.operand)
        if inner is not None:
            return -inner if isinstance(node.op, ast.USub) else inner
    return None


def is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


@dataclass
class Slot:
    parent: ast.AST
    field: str
    index: int | None
    node: ast.expr
    restricted: str | None  # None, "nonneg" or "nonzero"
    func: FuncDef | None  # the innermost def around the slot

    def replace(self, new: ast.expr) -> None:
        if self.index is None:
            setattr(self.parent, self.field, new)
        else:
            getattr(self.parent, self.field)[self.index] = new
        self.node = new


@dataclass
class Body:
    stmts: list[ast.stmt]  # the live list: edits change the tree
    start: int  # first index an operator may touch (1 after a docstring)
    func: FuncDef | None


@dataclass
class Sites:
    slots: list[Slot] = field(default_factory=list)
    bodies: list[Body] = field(default_factory=list)
    results: list[Slot] = field(default_factory=list)  # return values (or, lacking any, assigned values)


def collect(stmts: list[ast.stmt], enclosing: FuncDef | None) -> Sites:
    sites = Sites()
    _body(stmts, 0, enclosing, sites)
    if not sites.results:
        sites.results = [
            s
            for s in sites.slots
            if isinstance(s.parent, ast.Assign) and s.field == "value" and isinstance(s.parent.targets[0], ast.Name)
        ]
    return sites


def _body(stmts: list[ast.stmt], start: int, func: FuncDef | None, sites: Sites) -> None:
    sites.bodies.append(Body(stmts, start, func))
    for stmt in stmts[start:]:
        _stmt(stmt, func, sites)


def _stmt(stmt: ast.stmt, func: FuncDef | None, sites: Sites) -> None:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        if stmt.body:
            _body(stmt.body, 1 if is_docstring(stmt.body[0]) and len(stmt.body) > 1 else 0, stmt, sites)
    elif isinstance(stmt, ast.Return) and stmt.value is not None:
        sites.results.append(_expr(stmt, "value", None, None, func, sites))
    elif isinstance(stmt, (ast.Assign, ast.AugAssign)) or (isinstance(stmt, ast.AnnAssign) and stmt.value):
        _expr(stmt, "value", None, None, func, sites)
    elif isinstance(stmt, (ast.If, ast.While)):
        _expr(stmt, "test", None, None, func, sites)
        _body(stmt.body, 0, func, sites)
        if stmt.orelse:
            _body(stmt.orelse, 0, func, sites)
    elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)):
        _body(stmt.body, 0, func, sites)
        if isinstance(stmt, (ast.For, ast.AsyncFor)) and stmt.orelse:  # a with block has no else
            _body(stmt.orelse, 0, func, sites)
    elif isinstance(stmt, (ast.Try, ast.TryStar)):
        for block in [stmt.body, stmt.orelse, stmt.finalbody] + [h.body for h in stmt.handlers]:
            if block:
                _body(block, 0, func, sites)


def _expr(
    parent: ast.AST, name: str, index: int | None, restricted: str | None, func: FuncDef | None, sites: Sites
) -> Slot:
    node = getattr(parent, name) if index is None else getattr(parent, name)[index]
    slot = Slot(parent, name, index, node, restricted, func)
    sites.slots.append(slot)
    if number_value(node) is not None:
        return slot
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Pow):
            # the exponent is never a slot; the base of a fractional or negative power is restricted
            exponent = number_value(node.right)
            integral = exponent is not None and exponent == int(exponent) and exponent >= 0
            _expr(node, "left", None, restricted if integral else "nonzero", func, sites)
        elif isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)):
            _expr(node, "left", None, restricted, func, sites)
            _binop_right(node, "eps" if _is_eps_sum(node.right) else "nonzero", func, sites)
        else:
            _expr(node, "left", None, restricted, func, sites)
            _expr(node, "right", None, restricted, func, sites)
    elif isinstance(node, ast.UnaryOp):
        _expr(node, "operand", None, restricted, func, sites)
    elif isinstance(node, ast.Compare):
        _expr(node, "left", None, restricted, func, sites)
        for i in range(len(node.comparators)):
            _expr(node, "comparators", i, restricted, func, sites)
    elif isinstance(node, ast.BoolOp):
        for i in range(len(node.values)):
            _expr(node, "values", i, restricted, func, sites)
    elif isinstance(node, ast.IfExp):
        for part in ("test", "body", "orelse"):
            _expr(node, part, None, restricted, func, sites)
    elif isinstance(node, ast.Subscript):
        _expr(node, "value", None, restricted, func, sites)
    elif isinstance(node, (ast.Tuple, ast.List)) and isinstance(node.ctx, ast.Load):
        for i, elt in enumerate(node.elts):
            if not isinstance(elt, ast.Starred):
                _expr(node, "elts", i, restricted, func, sites)
    elif isinstance(node, ast.NamedExpr):
        _expr(node, "value", None, restricted, func, sites)
    elif isinstance(node, ast.Call) and call_name(node) in ELEMENTWISE:
        fname = call_name(node)
        inner = restricted
        if fname in NONZERO_ARGS:
            inner = "nonzero"
        elif fname in NONNEG_ARGS:
            inner = inner or "nonneg"
        elif fname in NONNEG_OUTPUT and restricted in ("nonneg", "eps"):
            inner = None
        for i, arg in enumerate(node.args):
            if not isinstance(arg, ast.Starred):
                _expr(node, "args", i, inner, func, sites)
    return slot


def _is_eps_sum(node: ast.AST) -> bool:
    """`f(...) + c` with c > 0 and f non-negative: the usual guarded denominator."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)):
        return False
    eps = number_value(node.right)
    return eps is not None and eps > 0 and call_name(node.left) in NONNEG_OUTPUT


def _binop_right(node: ast.BinOp, kind: str, func: FuncDef | None, sites: Sites) -> None:
    if kind != "eps":
        _expr(node, "right", None, kind, func, sites)
        return
    denom = node.right
    sites.slots.append(Slot(node, "right", None, denom, "nonzero", func))
    _expr(denom, "left", None, "nonneg", func, sites)  # abs(...) / square(...): its inside is free
    _expr(denom, "right", None, "nonzero", func, sites)  # eps: rescale only
