"""Expression operators of the offline mutator: Koza-style GP point mutations on Python ASTs.

Each operator takes a `Workspace`, its current `Sites` and the generator, edits
the workspace in place and returns a short description starting with its
name, or returns None when it does not apply (nothing to act on, or the draw
changed nothing). Operators (Koza, "Genetic Programming", 1992, ch. 6, for
point mutation, hoist/shrink and subtree crossover; constant and term
operators in the style of FunSearch's program edits):

- `const`: perturb a numeric literal (not an integer count: those are
  `count_ops`'s): relative step (sign kept), absolute
  step, sign flip or snap to an integer / zero; only relative steps in
  restricted slots (denominators, log/sqrt arguments);
- `swap_op`: swap an arithmetic operator (+ - * /, never creating an
  unguarded division, never between operands `kinds` says arithmetic
  refuses: a string, a tuple, a function, a generator) or a comparison
  operator;
- `wrap`: wrap a subexpression in a unary function (`templates.WRAPPERS`),
  one of a numeric or unknown kind;
- `insert`: add a new term built from the function's arguments and
  constants to a returned expression (`templates.TERMS`), never to a
  tuple, list, dict or other display (`(x, y) + 3.0` is a TypeError), and
  only from arguments of a numeric or unknown kind (never `rng - f`) and of
  the result's shape (`shapes`): an array gets a term that reads an array
  of its own shape;
- `prune`: replace an operation by one of its operands (hoist / shrink),
  which undoes bloat and lets a search drop a term.
"""

from __future__ import annotations

import ast
import math

import numpy as np

from engine.mutators.count_ops import count_literals
from engine.mutators.kinds import ARRAY, Kinds, arithmetic_ok
from engine.mutators.shapes import SCALAR, Shapes
from engine.mutators.sites import ELEMENTWISE, Sites, Slot, call_name, number_value
from engine.mutators.templates import TERMS, WRAPPERS, const, scale
from engine.mutators.workspace import Workspace, fresh, short

ARITH = (ast.Add, ast.Sub, ast.Mult, ast.Div)
COMPARE = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)
SYMBOL = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
}
WRAPPABLE = (ast.Name, ast.BinOp, ast.Call, ast.UnaryOp, ast.Subscript, ast.Attribute, ast.IfExp)

# insert: how often each term kind is drawn (exact-fit and gap terms are the ones that go past best fit)
TERM_WEIGHTS = {
    "lin": 0.3,
    "diff": 1.0,
    "inv": 0.6,
    "eq": 0.6,
    "sq": 0.5,
    "le": 1.5,
    "window": 1.5,
    "ratio": 0.4,
    "decay": 0.8,
}


def _pick(rng: np.random.Generator, items: list):
    return items[int(rng.integers(len(items)))]


def _fmt(value: float) -> str:
    return f"{value:.3g}"


def _is_boolean(node: ast.AST) -> bool:
    if isinstance(node, (ast.Compare, ast.BoolOp)):
        return True
    return (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, (ast.BitAnd, ast.BitOr))
        and _is_boolean(node.left)
        and _is_boolean(node.right)
    )


def op_const(ws: Workspace, sites: Sites, rng: np.random.Generator) -> str | None:
    counts = count_literals(ws.stmts)  # integer counts are `count`'s: a multiplicative step, never a sign flip
    slots = [s for s in sites.slots if number_value(s.node) is not None and id(s.node) not in counts]
    if not slots:
        return None
    slot = _pick(rng, slots)
    old = number_value(slot.node)
    assert old is not None
    draw = rng.random()
    if slot.restricted:
        if abs(old) < 1e-3:
            return None  # a guard epsilon: rescaling it changes nothing that matters
        new = old * math.exp(rng.normal(0.0, 0.5))
    elif draw < 0.15 and old != 0:
        # a nudge of 0.5 % to 5 % (log-uniform spread): a tuned constant often gains only from a percent,
        # which the 50 % steps below almost never draw (metric_value_sine's parabola, issue 30)
        new = old * math.exp(rng.normal(0.0, 0.5 * 10.0 ** rng.uniform(-2.0, -1.0)))
    elif draw < 0.45 and old != 0:
        new = old * math.exp(rng.normal(0.0, 0.5))
    elif draw < 0.8 or old == 0:
        new = old + rng.normal() * 10.0 ** rng.uniform(-1.0, 1.0)
    elif draw < 0.9:
        new = -old
    else:
        new = float(round(old)) if round(old) != old else 0.0
    if not math.isfinite(new) or abs(new) > 1e12:
        return None
    node = _whole(old, new, slot.restricted is not None) if _is_int(slot.node) else const(new)
    written = number_value(node)
    if written is None or written == old:
        return None
    slot.replace(node)
    return f"const {_fmt(old)}->{_fmt(written)}"


def _is_int(node: ast.AST) -> bool:
    """An integer literal (`90`, `-3`), not a bool."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int


def _whole(old: float, new: float, restricted: bool) -> ast.expr:
    """An integer literal stays one: `90` -> `91`, never `90.0` or `91.14`, which a size, an index or a
    `range()` refuses ("'float' object cannot be interpreted as an integer": a third of `const`'s children
    failed so on OpenEvolve's signal_processing and circle_packing_with_artifacts). Rounded to the same
    integer, it moves by one in the step's direction; a guarded one (a denominator) never reaches 0."""
    value = round(new)
    if value == old:
        value = int(old) + (1 if new >= old else -1)
    if restricted and (value == 0 or (value > 0) != (old > 0)):
        value = 1 if old > 0 else -1
    return ast.UnaryOp(op=ast.USub(), operand=ast.Constant(-value)) if value < 0 else ast.Constant(value)


def op_swap(ws: Workspace, sites: Sites, rng: np.random.Generator) -> str | None:
    slots = [
        s
        for s in sites.slots
        if not s.restricted
        and ((isinstance(s.node, ast.BinOp) and isinstance(s.node.op, ARITH)) or isinstance(s.node, ast.Compare))
    ]
    if not slots:
        return None
    node = _pick(rng, slots).node
    if isinstance(node, ast.Compare):
        swappable = [k for k, op in enumerate(node.ops) if isinstance(op, COMPARE)]  # not in, is: left alone
        if not swappable:
            return None
        i = swappable[int(rng.integers(len(swappable)))]
        old = type(node.ops[i])
        options: list[type[ast.cmpop]] = [op for op in COMPARE if op is not old]
        if id(node) in _keep_the_best_tests(ws.stmts) and old in SAME_WAY:
            options = [SAME_WAY[old]]  # `value < best` -> `>`: the best is never set (issue 30: 15 % caught)
        new = _pick(rng, options)
        node.ops[i] = new()
        return f"swap_op {SYMBOL[old]}->{SYMBOL[new]} in {short(node, 30)}"
    kinds = ws.kinds()
    if not (arithmetic_ok(kinds.of(node.left)) and arithmetic_ok(kinds.of(node.right))):
        return None  # `s * 3` of a string or a tuple is fine; `s + 3` is a TypeError
    old = type(node.op)
    choices: list[type[ast.operator]] = [op for op in (ast.Add, ast.Sub, ast.Mult) if op is not old]
    right = number_value(node.right)
    if old is ast.Mult and right is not None and right != 0:
        choices.append(ast.Div)  # dividing by a non-zero literal is safe
    if _is_boolean(node.left) and _is_boolean(node.right):
        choices = [op for op in choices if op is not ast.Sub]  # numpy refuses bool - bool
    if not choices:
        return None
    new = _pick(rng, choices)
    node.op = new()
    return f"swap_op {SYMBOL[old]}->{SYMBOL[new]} in {short(node, 30)}"


SAME_WAY: dict[type[ast.cmpop], type[ast.cmpop]] = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}


def _keep_the_best_tests(stmts: list[ast.stmt]) -> set[int]:
    """ids of the comparisons that guard an update of a compared name (`if value < best: best = value`):
    the idiom that keeps the best seen. Turned the other way the update never runs and the best stays its
    start (None, inf), which the evaluator then catches; so such a test only gains or loses its equality."""
    found: set[int] = set()
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, (ast.If, ast.While)) and isinstance(node.test, ast.Compare):
                compared = {n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)}
                written = {
                    n.id
                    for child in node.body
                    for n in ast.walk(child)
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                }
                if compared & written:
                    found.add(id(node.test))
    return found


def _wrappable(ws: Workspace, slot: Slot) -> bool:
    node = slot.node
    if slot.restricted or not isinstance(node, WRAPPABLE) or number_value(node) is not None:
        return False
    return not (isinstance(node, ast.Name) and node.id == ws.np_alias)


def op_wrap(ws: Workspace, sites: Sites, rng: np.random.Generator) -> str | None:
    kinds = ws.kinds()
    slots = [s for s in sites.slots if _wrappable(ws, s) and arithmetic_ok(kinds.of(s.node))]
    if not slots:
        return None
    slot = _pick(rng, slots)
    name = _pick(rng, sorted(WRAPPERS))
    old = slot.node
    slot.replace(fresh(WRAPPERS[name](fresh(old), ws.np_alias, rng)))
    return f"wrap {name}({short(old, 30)})"


# displays a number cannot be added to: the insert operator leaves such results alone
NOT_NUMERIC = (
    ast.Tuple,
    ast.List,
    ast.Dict,
    ast.Set,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.JoinedStr,
    ast.Lambda,
)


def _numeric_result(node: ast.AST) -> bool:
    if isinstance(node, NOT_NUMERIC):
        return False
    return not (isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (str, bytes))))


def _numeric_params(ws: Workspace, func, kinds: Kinds) -> list[str]:
    """The parameters a term may be built from: not those whose default is a tuple, list, dict, string or None
    (`bounds=(-5, 5)`: `iterations - bounds` is a TypeError), nor those of a kind arithmetic refuses (a function
    `f` it calls, a generator `rng`: `rng - f`; `engine.mutators.kinds`)."""
    params = [p for p in ws.params(func) if arithmetic_ok(kinds.name(p))]
    if func is None:
        return params
    args = [a.arg for a in func.args.posonlyargs + func.args.args]
    defaults = dict(zip(args[len(args) - len(func.args.defaults) :], func.args.defaults))
    return [p for p in params if p not in defaults or _numeric_result(defaults[p])]


def _term_params(slot: Slot, kinds: Kinds, numeric: list[str], shapes: Shapes) -> tuple[list[str], list[str]]:
    """The parameters a term added to `slot` may read, and those of which it must read one: a term of
    scalars added to an array shifts every element alike (a translation of points, a bias no argmax sees),
    and a parameter of another shape does not broadcast (`radii + centers`: (26,) and (26, 2);
    `engine.mutators.shapes`). A scalar result takes terms of scalars only, an array of a shape not known
    none (a filter's output, shorter than its input signal); a result of neither kind nor shape known keeps
    kinds' rule. `numeric` and `shapes`: the slot's function's numeric parameters and shape tags."""
    tag = shapes.of(slot.node)
    if tag is None:
        return ([], []) if kinds.of(slot.node) == ARRAY else (numeric, numeric)
    allowed = [p for p in numeric if shapes.names.get(p) in (SCALAR, tag)]
    return allowed, [p for p in allowed if shapes.names.get(p) == tag]


def op_insert(ws: Workspace, sites: Sites, rng: np.random.Generator) -> str | None:
    kinds = ws.kinds()
    options = []
    per_func: dict[int, tuple[list[str], Shapes]] = {}  # inferred once per function, not per returned value
    for s in sites.results:
        if _numeric_result(s.node) and arithmetic_ok(kinds.of(s.node)):
            key = id(s.func)
            if key not in per_func:
                per_func[key] = (_numeric_params(ws, s.func, kinds), ws.shapes(s.func, kinds))
            allowed, needed = _term_params(s, kinds, *per_func[key])
            if needed:
                options.append((s, allowed, needed))
    if not options:
        return None
    slot, params, needed = _pick(rng, options)
    terms = sorted(TERM_WEIGHTS)
    weights = np.array([TERM_WEIGHTS[k] for k in terms])
    kind = terms[int(rng.choice(len(terms), p=weights / weights.sum()))]
    first = _pick(rng, needed)
    others = [p for p in params if p != first]
    x: ast.expr = ast.Name(id=first, ctx=ast.Load())
    y: ast.expr = const(scale(rng))
    if others:
        second = _pick(rng, others)
        y = ast.Name(id=second, ctx=ast.Load())
        if kind in ("diff", "inv", "eq", "sq", "le", "window", "decay") and rng.random() < 0.75:
            # a difference "later - earlier" parameter reads as room left (bins - item): favoured, not forced
            later, earlier = sorted((first, second), key=params.index, reverse=True)
            x, y = ast.Name(id=later, ctx=ast.Load()), ast.Name(id=earlier, ctx=ast.Load())
    term = fresh(TERMS[kind](x, y, ws.np_alias, rng))
    slot.replace(ast.BinOp(left=slot.node, op=ast.Add(), right=term))
    return f"insert {kind} {short(term, 45)}"


def op_prune(ws: Workspace, sites: Sites, rng: np.random.Generator) -> str | None:
    options: list[tuple[Slot, ast.expr]] = []
    for s in sites.slots:
        node = s.node
        if s.restricted or number_value(node) is not None:
            continue
        if isinstance(node, ast.BinOp) and isinstance(node.op, (*ARITH, ast.Pow)):
            options.append((s, node.left))
            if isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
                options.append((s, node.right))
        elif (
            call_name(node) in ELEMENTWISE
            and isinstance(node, ast.Call)
            and node.args
            and not isinstance(node.args[0], ast.Starred)
            and not (call_name(node) == "clip" and call_name(s.parent) == "exp")
        ):  # keeps exp from overflowing
            options.append((s, node.args[0]))
        elif isinstance(node, ast.IfExp):
            options += [(s, node.body), (s, node.orelse)]
    if not options:
        return None
    slot, keep = _pick(rng, options)
    old = slot.node
    slot.replace(keep)
    return f"prune {short(old, 30)} -> {short(keep, 25)}"
