"""Subtree crossover (Koza 1992): graft a subexpression of a donor node into the child.

Donors are other valid nodes of the archive, best first. Their material is
the expressions in the mutable region of their entry file (same slots as the
child's, restricted ones excluded), with the donor's numpy alias renamed to
the child's. A graft is only offered where every name it reads exists in the
child where it is read (its module names, the function's parameters, and the
locals bound above it in reading order: `reading_order`), so crossover never
produces a NameError that the gate would have to catch, and only
where its kind fits the expression it replaces (`kinds.may_replace`: a number
for a number, an array for an array, never a generator or a function in
arithmetic) and so does its shape (`shapes`: `np.ones(n)` never replaces
`np.zeros((n, 2))`, nor a signal its filtered output), never a call of the
def it is grafted into (`np.ones(n) <- compute_max_radii(centers)` inside
`compute_max_radii`: a recursion without end). Internal
nodes are chosen 90% of the time, as Koza recommends; better donors are
chosen more often (weight 1 / (rank + 1)).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence

import numpy as np

from engine import pyast
from engine.mutators.base import MutationError
from engine.mutators.kinds import may_replace
from engine.mutators.reading_order import bound_before, holds
from engine.mutators.region import find_region
from engine.mutators.scope import BUILTIN_NAMES, function_bindings, loaded_names, module_bindings, numpy_alias
from engine.mutators.shapes import SCALAR, may_share
from engine.mutators.sites import Sites, Slot, collect, number_value
from engine.mutators.workspace import Graft, Workspace, fresh, short

MAX_GRAFT_NODES = 60
_TARGETS = (
    ast.Name,
    ast.BinOp,
    ast.Call,
    ast.UnaryOp,
    ast.Subscript,
    ast.Attribute,
    ast.IfExp,
    ast.Compare,
    ast.Constant,
)


class _Rename(ast.NodeTransformer):
    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def visit_Name(self, node: ast.Name) -> ast.Name:
        return ast.Name(id=self.new, ctx=node.ctx) if node.id == self.old else node


def donor_grafts(
    donors: Sequence[Mapping[str, str]], entry_file: str, entry_function: str, np_alias: str
) -> tuple[Graft, ...]:
    """Every graftable subexpression of the donors' regions; donors that do not parse are skipped."""
    grafts: list[Graft] = []
    seen: set[str] = set()
    for rank, files in enumerate(donors):
        source = files.get(entry_file)
        if not isinstance(source, str):
            continue
        try:
            tree = pyast.parse(source)
            region = find_region(source, tree, entry_function)
        except (SyntaxError, ValueError, RecursionError, MutationError):  # an unreadable donor offers nothing
            continue
        alias = numpy_alias(tree.body) or (numpy_alias(region.enclosing.body) if region.enclosing else None)
        module_names = module_bindings(tree)[0]
        for slot in collect(list(region.stmts), region.enclosing).slots:
            node = slot.node
            if slot.restricted or not isinstance(node, _TARGETS):
                continue
            if sum(1 for _ in ast.walk(node)) > MAX_GRAFT_NODES:
                continue
            if alias and alias != np_alias:
                node = _Rename(alias, np_alias).visit(fresh(node))
            key = ast.dump(node)
            if key in seen:
                continue
            seen.add(key)
            names = loaded_names(node)
            if alias is None and np_alias in names and np_alias in module_names:
                continue  # the donor's `np` is not numpy
            internal = not isinstance(node, (ast.Name, ast.Constant)) and number_value(node) is None
            grafts.append(Graft(fresh(node), frozenset(names), rank, internal))
    return tuple(grafts)


def op_crossover(ws: Workspace, sites: Sites, rng: np.random.Generator) -> str | None:
    if not ws.grafts:
        return None
    targets = [
        s
        for s in sites.slots
        if not s.restricted
        and isinstance(s.node, _TARGETS)
        and not (isinstance(s.node, ast.Name) and s.node.id == ws.np_alias)
    ]
    if not targets:
        return None
    slot = targets[int(rng.integers(len(targets)))]
    names = _readable(ws, slot)
    current = ast.dump(slot.node)
    kinds = ws.kinds()
    shapes = ws.shapes(slot.func, kinds)
    slot_kind, slot_shape = kinds.of(slot.node), shapes.of(slot.node)
    unpacked = _unpacked(slot)
    own = slot.func.name if slot.func is not None else None  # a graft calling its own def recurses forever
    usable = [
        g
        for g in ws.grafts
        if g.names <= names
        and own not in g.names
        and ast.dump(g.node) != current
        and may_replace(slot_kind, kinds.of(g.node))
        and _shape_fits(slot_shape, shapes.of(g.node), unpacked)
    ]
    if not usable:
        return None
    if any(g.internal for g in usable) and any(not g.internal for g in usable):
        internal = bool(rng.random() < 0.9)
        usable = [g for g in usable if g.internal == internal]
    weights = np.array([1.0 / (g.rank + 1) for g in usable])
    graft = usable[int(rng.choice(len(usable), p=weights / weights.sum()))]
    old = slot.node
    slot.replace(fresh(graft.node))
    return f"crossover {short(old, 25)} <- {short(graft.node, 35)} (donor {graft.rank})"


def _shape_fits(slot_shape, graft_shape, unpacked: bool) -> bool:
    """Shapes that may stand for each other, and never a number where `x, y = ...` unpacks a pair."""
    return may_share(slot_shape, graft_shape) and not (unpacked and graft_shape == SCALAR)


def _unpacked(slot: Slot) -> bool:
    """Is the slot the value of an assignment to several names (`x, y = <slot>`)?"""
    parent = slot.parent
    return (
        isinstance(parent, ast.Assign)
        and slot.field == "value"
        and any(isinstance(t, (ast.Tuple, ast.List)) for t in parent.targets)
    )


def _readable(ws: Workspace, slot: Slot) -> set[str]:
    """The names a graft may read at the slot: the module's, the builtins, numpy, the slot's function's
    parameters and the locals bound above it in reading order, and what the defs around it bind (a nested
    def runs once they are done). Not another function's locals, nor a local bound further down: pyflakes'
    undefined names."""
    func = slot.func
    if func is None:
        return ws.names()
    before = bound_before(ws.stmts if func is ws.enclosing else func.body, slot.node)
    if before is None:
        return ws.names()
    # a name the function assigns is local to it whatever the module binds: read before that, it is unbound
    scope = ws.live(func)
    declared = {n for node in ast.walk(scope) if isinstance(node, (ast.Global, ast.Nonlocal)) for n in node.names}
    names = set(ws.module_names) - (function_bindings(scope) - declared) | BUILTIN_NAMES | {ws.np_alias}
    names |= before | _params(func)
    if ws.enclosing is not None:
        names |= set(ws.preamble)
        if func is not ws.enclosing:
            names |= module_bindings(ast.Module(body=[*ws.stmts, *ws.postamble], type_ignores=[]))[0]
    for outer in ast.walk(ast.Module(body=ws.stmts, type_ignores=[])):
        if isinstance(outer, (ast.FunctionDef, ast.AsyncFunctionDef)) and outer is not func and holds(outer, func):
            names |= module_bindings(ast.Module(body=outer.body, type_ignores=[]))[0] | _params(outer)
    return names


def _params(func: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    return {a.arg for a in ast.walk(func.args) if isinstance(a, ast.arg)}
