"""Which shape an array has, as a symbolic tag: so terms and grafts combine only arrays of one shape.

`kinds` tells a number from an array; two arrays still fail together when
their shapes differ, and a number put where an array was (or the reverse)
changes what the code after it indexes. Measured on OpenEvolve's published
examples (issue 30): `insert` added terms of `centers` (26 x 2) to the 26
radii, and terms of a signal (`x`, 100 samples) to its filtered output
(`np.zeros(len(x) - w + 1)`): "operands could not be broadcast together"
in 65.9 % of its children; crossover put `np.ones(n)` where `np.zeros((n, 2))`
was. Tags, from the AST alone and within one function:

- `SCALAR`, the empty shape (), for what `kinds` says is a number;
- a parameter that is not a number: its own name (the shape its caller
  gives it);
- `np.zeros/ones/empty/full(S)`, `np.arange(S)` (one argument),
  `np.linspace(a, b, S)`, a sampler's `size=S`: S's dimensions as they read
  (`np.zeros((n, 2))`: ("n", "2"); `np.ones(n)` and `np.ones((n,))`: ("n",));
- `a[i]` of a known shape: its first dimension dropped for each scalar index
  (a row of an (n, 2) array is (2,), an element of a vector a scalar); of
  a parameter `p`: `"p[]"`, a shape of its own;
- `np.*_like(a)`, `np.asarray(a)`, `a.copy()`, `-a`: a's tag;
- arithmetic, comparisons and numpy's elementwise functions: the one tag
  of their operands that are not scalars, `SCALAR` when all are, unknown
  when two differ;
- a name: the tag every assignment to it agrees on (`x = np.clip(x, ...)`
  keeps x's);
- anything else unknown (None). Operators compare two tags only when both
  are known, so an unknown tag refuses nothing that `kinds` allows (but an
  array of unknown shape gets no inserted term).

Tags are textual: `np.zeros(n)` in two functions has one tag even where
their `n` differ, which is why they are inferred per function.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field

from engine.mutators.kinds import NUMBER, SAMPLERS, Kinds
from engine.mutators.sites import ELEMENTWISE

Tag = tuple[str, ...] | str  # the dimensions as they read, or a parameter's name (a shape its caller gives)
SCALAR: Tag = ()
_SELF: Tag = "<self>"  # in `x = f(x)`, the name's own shape: the assignment keeps it
SIZED = frozenset({"zeros", "ones", "empty", "full"})
LIKE = frozenset({"zeros_like", "ones_like", "empty_like", "full_like", "copy"})
AS_ARRAY = frozenset({"asarray", "array", "ascontiguousarray", "asfarray"})


def agree(tags: Iterable[Tag | None]) -> Tag | None:
    """The one non-scalar tag among `tags` (SCALAR when all are scalar); None if one is unknown or two differ."""
    out, itself = SCALAR, False
    for tag in tags:
        if tag is None:
            return None
        if tag in (SCALAR, _SELF):
            itself |= tag == _SELF
            continue
        if out not in (SCALAR, tag):
            return None
        out = tag
    return _SELF if itself and out == SCALAR else out


def may_share(a: Tag | None, b: Tag | None) -> bool:
    """May values of shape tags `a` and `b` stand for each other? Unless both are known and differ."""
    return a is None or b is None or a == b


def _size(node: ast.expr) -> Tag:
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(ast.unparse(e) for e in node.elts)
    return (ast.unparse(node),)


@dataclass
class Shapes:
    """The shape tags of one function's names (`infer`); `of(expr)` the tag of an expression there."""

    kinds: Kinds
    names: dict[str, Tag | None] = field(default_factory=dict)

    def of(self, node: ast.AST) -> Tag | None:
        if self.kinds.of(node) == NUMBER:
            return SCALAR
        if isinstance(node, ast.Name):
            return self.names.get(node.id)
        if isinstance(node, ast.BinOp):
            return agree([self.of(node.left), self.of(node.right)])
        if isinstance(node, ast.UnaryOp):
            return self.of(node.operand)
        if isinstance(node, ast.Compare):
            return agree([self.of(node.left), *(self.of(c) for c in node.comparators)])
        if isinstance(node, ast.IfExp):
            body, orelse = self.of(node.body), self.of(node.orelse)
            return body if body == orelse else None
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.Subscript):
            return self._index(node)
        return None

    def _index(self, node: ast.Subscript) -> Tag | None:
        """`a[i]` of an (n, 2) array: its row, (2,); `a[i, j]` or `v[i]` of a vector: a scalar; `p[i]` of a
        parameter: "p[]". Slices: unknown."""
        tag = self.of(node.value)
        index = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if tag is None or any(isinstance(i, ast.Slice) or self.of(i) != SCALAR for i in index):
            return None
        if isinstance(tag, str):  # a parameter's element or row: a shape of its own, whatever it is
            return tag + "[]" * len(index)
        return tag[len(index) :] if len(index) <= len(tag) else None

    def _call(self, node: ast.Call) -> Tag | None:
        func = node.func
        if not isinstance(func, ast.Attribute):
            return None
        name, args = func.attr, node.args
        if name == "copy" and not args and not node.keywords:
            return self.of(func.value)  # a.copy()
        if not isinstance(func.value, (ast.Name, ast.Attribute)):
            return None
        size = next((k.value for k in node.keywords if k.arg in ("size", "shape", "num")), None)
        if name in SIZED and args:
            return _size(args[0])
        if name == "arange" and len(args) == 1 and not node.keywords:
            return _size(args[0])
        if name == "linspace":
            return _size(args[2]) if len(args) >= 3 else _size(size) if size is not None else ("50",)
        if name in SAMPLERS:
            return _size(size) if size is not None else None
        if (name in LIKE or name in AS_ARRAY) and args:
            return self.of(args[0])
        if name in ELEMENTWISE and not node.keywords:
            return agree(self.of(a) for a in args)
        return None


def infer(func: ast.AST, params: Iterable[str], kinds: Kinds) -> Shapes:
    """The shape tags of the names of `func` (a def, or a module of a marked region's statements), whose
    parameters `params` are given their own names as tags (a number's is SCALAR)."""
    given: dict[str, Tag | None] = {p: (SCALAR if kinds.name(p) == NUMBER else p) for p in params}
    shapes = Shapes(kinds, dict(given))
    for _ in range(3):  # a name assigned from a name typed in an earlier pass
        found: dict[str, list[Tag | None]] = {p: [tag] for p, tag in given.items()}
        for node in ast.walk(func):
            for target, value in _bindings(node):
                reading = Shapes(kinds, {**shapes.names, target: _SELF})
                found.setdefault(target, []).append(reading.of(value) if value is not None else None)
        names: dict[str, Tag | None] = {}
        for name, tags in found.items():
            distinct = set(tags) - {_SELF}
            names[name] = distinct.pop() if len(distinct) == 1 else None  # every assignment agrees, or unknown
        shapes = Shapes(kinds, names)
    return shapes


def _bindings(node: ast.AST) -> list[tuple[str, ast.expr | None]]:
    """(name, value) for each name `node` binds; value None where the value of that name is not read off."""
    if isinstance(node, ast.Assign):
        out: list[tuple[str, ast.expr | None]] = []
        for target in node.targets:
            if isinstance(target, ast.Name):
                out.append((target.id, node.value))
            elif isinstance(target, (ast.Tuple, ast.List)):
                out += [(n.id, None) for n in ast.walk(target) if isinstance(n, ast.Name)]
        return out
    if isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and isinstance(node.target, ast.Name):
        return [(node.target.id, node.value)]
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        return [(node.target.id, ast.BinOp(left=node.target, op=node.op, right=node.value))]
    if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension, ast.With)):
        targets = [node.target] if not isinstance(node, ast.With) else [i.optional_vars for i in node.items]
        return [(n.id, None) for t in targets if t is not None for n in ast.walk(t) if isinstance(n, ast.Name)]
    return []
