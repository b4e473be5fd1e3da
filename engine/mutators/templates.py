"""Building blocks the offline operators splice in: constants, wrappers, new terms.

Every form here is numpy-safe on any finite input: a division is always by
`abs(...) + 1e-6`, an exponential's argument is clipped or non-positive, a
square root or log1p gets an absolute value. The term library follows the
kinds of expressions FunSearch found for online bin packing (Romera-Paredes et
al., Nature 2024): linear and quadratic preferences for the room a bin would
have left, a strong bonus for an exact fit, a penalty on leaving a small gap,
and smooth decays around a fit.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import numpy as np

EPS = 1e-6


def const(value: float) -> ast.expr:
    """A numeric literal; negatives as `-c` so that `ast.unparse` never mis-binds them."""
    value = float(f"{value:.3g}")
    if value == int(value) and abs(value) < 1e6:
        value = float(int(value))
    if value < 0 or (value == 0 and np.signbit(value)):
        return ast.UnaryOp(op=ast.USub(), operand=ast.Constant(abs(value)))
    return ast.Constant(value)


def coefficient(rng: np.random.Generator) -> float:
    """A signed coefficient, log-uniform in magnitude over [0.1, 30]."""
    sign = 1.0 if rng.random() < 0.5 else -1.0
    return sign * float(10.0 ** rng.uniform(-1.0, 1.5))


def scale(rng: np.random.Generator) -> float:
    """A positive threshold or length scale, log-uniform over [1, 100]."""
    return float(10.0 ** rng.uniform(0.0, 2.0))


def np_call(alias: str, name: str, *args: ast.expr) -> ast.Call:
    return ast.Call(
        func=ast.Attribute(value=ast.Name(id=alias, ctx=ast.Load()), attr=name, ctx=ast.Load()),
        args=list(args),
        keywords=[],
    )


def _bin(left: ast.expr, op: ast.operator, right: ast.expr) -> ast.BinOp:
    return ast.BinOp(left=left, op=op, right=right)


def _cmp(left: ast.expr, op: ast.cmpop, right: ast.expr) -> ast.Compare:
    return ast.Compare(left=left, ops=[op], comparators=[right])


def _guarded_div(num: ast.expr, den: ast.expr, alias: str) -> ast.BinOp:
    return _bin(num, ast.Div(), _bin(np_call(alias, "abs", den), ast.Add(), const(EPS)))


# ---- wrappers: f(e) -> a new expression around e -------------------------------------------

Wrapper = Callable[[ast.expr, str, np.random.Generator], ast.expr]

WRAPPERS: dict[str, Wrapper] = {
    "square": lambda e, np_, rng: np_call(np_, "square", e),
    "sqrt_abs": lambda e, np_, rng: np_call(np_, "sqrt", np_call(np_, "abs", e)),
    "log1p_abs": lambda e, np_, rng: np_call(np_, "log1p", np_call(np_, "abs", e)),
    "exp": lambda e, np_, rng: np_call(
        np_, "exp", np_call(np_, "clip", _bin(const(coefficient(rng) / 10.0), ast.Mult(), e), const(-30.0), const(30.0))
    ),
    "maximum": lambda e, np_, rng: np_call(np_, "maximum", e, const(coefficient(rng))),
    "minimum": lambda e, np_, rng: np_call(np_, "minimum", e, const(coefficient(rng))),
    "inverse": lambda e, np_, rng: _guarded_div(const(1.0), e, np_),
}


# ---- terms: built from the function's arguments x, y and constants -----------------------------

Term = Callable[[ast.expr, ast.expr, str, np.random.Generator], ast.expr]


def _diff(x: ast.expr, y: ast.expr) -> ast.BinOp:
    return _bin(x, ast.Sub(), y)


def _window(x: ast.expr, y: ast.expr, np_: str, rng: np.random.Generator) -> ast.expr:
    """c * ((x - y > 0) & (x - y < k)): a penalty or bonus for leaving a small gap."""
    inside = _bin(_cmp(_diff(x, y), ast.Gt(), const(0.0)), ast.BitAnd(), _cmp(_diff(x, y), ast.Lt(), const(scale(rng))))
    return _bin(const(coefficient(rng)), ast.Mult(), inside)


TERMS: dict[str, Term] = {
    "lin": lambda x, y, np_, rng: _bin(const(coefficient(rng)), ast.Mult(), x),
    "diff": lambda x, y, np_, rng: _bin(const(coefficient(rng)), ast.Mult(), _diff(x, y)),
    "inv": lambda x, y, np_, rng: _guarded_div(const(coefficient(rng)), _diff(x, y), np_),
    "eq": lambda x, y, np_, rng: _bin(const(coefficient(rng)), ast.Mult(), _cmp(_diff(x, y), ast.Eq(), const(0.0))),
    "sq": lambda x, y, np_, rng: _bin(
        const(coefficient(rng) / 30.0), ast.Mult(), _bin(_diff(x, y), ast.Pow(), ast.Constant(2))
    ),
    "le": lambda x, y, np_, rng: _bin(
        const(coefficient(rng)), ast.Mult(), _cmp(np_call(np_, "abs", _diff(x, y)), ast.LtE(), const(scale(rng)))
    ),
    "window": _window,
    "ratio": lambda x, y, np_, rng: _bin(const(coefficient(rng)), ast.Mult(), _guarded_div(x, y, np_)),
    "decay": lambda x, y, np_, rng: _bin(
        const(coefficient(rng)),
        ast.Mult(),
        np_call(
            np_,
            "exp",
            np_call(
                np_,
                "clip",
                _bin(
                    ast.UnaryOp(op=ast.USub(), operand=np_call(np_, "abs", _diff(x, y))), ast.Div(), const(scale(rng))
                ),
                const(-30.0),
                const(30.0),
            ),
        ),
    ),
}
