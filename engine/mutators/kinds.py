"""What kind of value an expression holds, roughly: so operators combine only operands that go together.

Operand swaps, inserted terms, wraps and crossover grafts used to write
`rng - f` (a random generator minus a function) or `(x, y) + 0.3`; OpenEvolve-
and ShinkaEvolve-style evaluators catch the TypeError and score the child 0
(issue 30: 24-47 % of the children on OpenEvolve's function_minimization).
This is a cheap, flow-insensitive inference from the AST alone, never exec:

- literals: numbers (and bools) are `number`, strings `str`, None `none`,
  tuple/list/set/dict displays and comprehensions `seq`, lambdas `callable`;
- known calls: `np.random.default_rng()`, `np.random.RandomState()`,
  `random.Random()` make an `rng`; numpy's array constructors an `array`; a
  generator's or `np.random`'s samplers a `number`, an `array` with `size=`;
  `len()`, `int()`, `float()`, `math.*`, `a.shape[k]` a `number`; `str()` a
  `str`; `a.shape` a `seq`; numpy's elementwise functions (`np.sin`,
  `np.clip`...) of numbers a `number`, of an array an `array`; a reduction
  of one argument and no axis (`np.sum(a)`, `np.mean(a)`) a `number`;
  `tuple()`, `list()`, `zip()`, `range()`... a `seq`; a call to a def of the
  module whose every `return` has one kind, that kind;
- names: the kinds of what is assigned to them (all assignments joined),
  their annotation or default value, a def, class or `from` import is a
  `callable`, an `import` a `module`; how a name is used: called, it is a
  `callable`; its `.uniform()`/`.normal()`... called, an `rng`; looped over
  or zipped and never itself an operand of arithmetic, a `seq` (a list of
  training points: `x - train_x` is a TypeError; an array in `bins - item`
  stays numeric);
- anything else `unknown`.

Joining two kinds gives the kind when they agree, `array` for a number and an
array, `none` for None and anything (`best = None`, later a number: the first
pass through a loop reads None), else `unknown`. `number` and `array` go together in arithmetic (numpy
broadcasts); `rng`, `callable`, `module`, `str`, `seq` and `none` never do.
`unknown` is allowed everywhere: the inference only refuses what it knows to
be wrong, so it cannot make an operator lose a program it used to handle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from engine.mutators.sites import ELEMENTWISE

NUMBER, ARRAY, RNG, CALLABLE, MODULE, STR, SEQ, NONE, UNKNOWN = (
    "number",
    "array",
    "rng",
    "callable",
    "module",
    "str",
    "seq",
    "none",
    "unknown",
)
NUMERIC = frozenset({NUMBER, ARRAY})
NOT_ARITHMETIC = frozenset({RNG, CALLABLE, MODULE, STR, SEQ, NONE})

RNG_MAKERS = frozenset({"default_rng", "RandomState", "Random", "Generator"})
SAMPLERS = frozenset(
    {
        "uniform",
        "normal",
        "random",
        "standard_normal",
        "integers",
        "randint",
        "rand",
        "randn",
        "exponential",
        "gamma",
        "beta",
        "poisson",
        "binomial",
        "lognormal",
        "gauss",
        "triangular",
        "laplace",
        "standard_cauchy",
        "random_sample",
    }
)
ARRAY_MAKERS = frozenset(
    {
        "zeros",
        "ones",
        "empty",
        "full",
        "array",
        "asarray",
        "arange",
        "linspace",
        "logspace",
        "zeros_like",
        "ones_like",
        "empty_like",
        "full_like",
        "stack",
        "vstack",
        "hstack",
        "column_stack",
        "concatenate",
        "eye",
        "identity",
        "diag",
        "outer",
        "cumsum",
        "sort",
        "argsort",
        "copy",
        "tile",
        "repeat",
        "reshape",
    }
)
REDUCTIONS = frozenset(
    {"sum", "mean", "median", "std", "var", "prod", "max", "min", "amax", "amin", "ptp", "count_nonzero"}
)
NUMBER_CALLS = frozenset({"len", "int", "float", "round", "bool", "abs", "min", "max", "sum", "pow", "divmod"})
STR_CALLS = frozenset({"str", "repr", "format", "chr", "hex", "bin", "oct"})
SEQ_CALLS = frozenset(
    {"tuple", "list", "dict", "set", "frozenset", "sorted", "zip", "enumerate", "range", "map", "filter", "reversed"}
)
MODULE_CONSTANTS = frozenset({"pi", "e", "inf", "nan", "tau", "euler_gamma", "newaxis"})
NUMBER_ATTRS = frozenset({"size", "ndim", "real", "imag"})
ANNOTATIONS = {
    "int": NUMBER,
    "float": NUMBER,
    "complex": NUMBER,
    "bool": NUMBER,
    "ndarray": ARRAY,
    "NDArray": ARRAY,
    "ArrayLike": UNKNOWN,
    "str": STR,
    "tuple": SEQ,
    "list": SEQ,
    "dict": SEQ,
    "set": SEQ,
    "Sequence": SEQ,
    "Tuple": SEQ,
    "List": SEQ,
    "Dict": SEQ,
    "Callable": CALLABLE,
    "Generator": RNG,
    "RandomState": RNG,
    "Random": RNG,
}


def join(a: str, b: str) -> str:
    if a == b:
        return a
    if NONE in (a, b):
        return NONE  # None first, a value later (`best = None`): the first pass through a loop reads None
    if {a, b} <= NUMERIC:
        return ARRAY
    return UNKNOWN


def join_all(kinds: Iterable[str]) -> str:
    out: str | None = None
    for kind in kinds:
        out = kind if out is None else join(out, kind)
    return out or UNKNOWN


def arithmetic_ok(kind: str) -> bool:
    """May a value of this kind be an operand of + - * / (or be wrapped in a numeric function)?"""
    return kind not in NOT_ARITHMETIC


def may_replace(slot_kind: str, graft_kind: str) -> bool:
    """May an expression of `graft_kind` take the place of one of `slot_kind` (crossover)? Never a None: in
    place of a value (`return best_x, ...`), it is what the evaluator then fails on; an array only by an
    array and a number only by a number (typed crossover: Montana, "Strongly typed genetic programming",
    Evolutionary Computation 1995): a number in place of an array loses its shape (`np.arange(n)` -> `3.5`),
    an array in place of a number gives one to what was a scalar (`if len(x) < w` -> `if np.linspace(...)`,
    an angle of a ring of circles -> every circle's center), and a number's place takes only what is known to
    be a number (`d <- centers[i]`, a row of a parameter, wrote a pair into a vector's element)."""
    if graft_kind == NONE:
        return False
    if slot_kind == NUMBER:  # a scalar only by what is known to be one: a graft of a parameter's row is not
        return graft_kind == NUMBER
    if slot_kind == ARRAY:
        return graft_kind in (ARRAY, UNKNOWN)
    if slot_kind in NOT_ARITHMETIC:
        return graft_kind == slot_kind
    return graft_kind not in NOT_ARITHMETIC


def _dotted(node: ast.AST) -> list[str]:
    """`np.random.default_rng` -> ["np", "random", "default_rng"]; [] for anything but names and attributes."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return []
    parts.append(node.id)
    return parts[::-1]


@dataclass
class Kinds:
    """The kinds of the names of a piece of code; `of(expr)` the kind of an expression there."""

    names: dict[str, str] = field(default_factory=dict)
    returns: dict[str, str] = field(default_factory=dict)  # def name -> the kind of what it returns

    def name(self, name: str) -> str:
        return self.names.get(name, UNKNOWN)

    def of(self, node: ast.AST) -> str:
        if isinstance(node, ast.Constant):
            value = node.value
            if value is None:
                return NONE
            if isinstance(value, (str, bytes)):
                return STR
            return NUMBER if isinstance(value, (int, float, complex)) else UNKNOWN
        if isinstance(node, ast.JoinedStr):
            return STR
        if isinstance(
            node, (ast.Tuple, ast.List, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
        ):
            return SEQ
        if isinstance(node, ast.Lambda):
            return CALLABLE
        if isinstance(node, ast.Name):
            return self.name(node.id)
        if isinstance(node, ast.Attribute):
            return self._attribute(node)
        if isinstance(node, ast.BinOp):
            return self._binop(node)
        if isinstance(node, ast.UnaryOp):
            inner = self.of(node.operand)
            return NUMBER if isinstance(node.op, ast.Not) else inner if inner in NUMERIC else UNKNOWN
        if isinstance(node, ast.Compare):
            sides = [self.of(node.left), *(self.of(c) for c in node.comparators)]
            return ARRAY if ARRAY in sides else NUMBER
        if isinstance(node, ast.BoolOp):
            return join_all(self.of(v) for v in node.values)
        if isinstance(node, ast.IfExp):
            return join(self.of(node.body), self.of(node.orelse))
        if isinstance(node, ast.Subscript):
            if isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
                return NUMBER  # `a.shape[0]`
            inner = self.of(node.value)
            return inner if inner in (ARRAY, STR) else UNKNOWN
        if isinstance(node, ast.NamedExpr):
            return self.of(node.value)
        if isinstance(node, ast.Call):
            return self._call(node)
        return UNKNOWN

    def _attribute(self, node: ast.Attribute) -> str:
        base = self.of(node.value)
        if node.attr == "shape" and base != MODULE:
            return SEQ  # an array's, whatever else the name is known to be
        if base == MODULE:
            return NUMBER if node.attr in MODULE_CONSTANTS else UNKNOWN
        if base == ARRAY:
            return SEQ if node.attr == "shape" else NUMBER if node.attr in NUMBER_ATTRS else ARRAY
        return UNKNOWN

    def _binop(self, node: ast.BinOp) -> str:
        left, right = self.of(node.left), self.of(node.right)
        if left in NUMERIC and right in NUMERIC:
            return join(left, right)
        if ARRAY in (left, right) and UNKNOWN in (left, right):
            return ARRAY
        if left == right and left in (SEQ, STR) and isinstance(node.op, ast.Add):
            return left
        if isinstance(node.op, ast.Mult) and {left, right} in ({SEQ, NUMBER}, {STR, NUMBER}):
            return SEQ if SEQ in (left, right) else STR
        if left == STR and isinstance(node.op, ast.Mod):
            return STR
        return UNKNOWN

    def _call(self, node: ast.Call) -> str:
        path = _dotted(node.func)
        if not path:
            return UNKNOWN
        last, head = path[-1], path[0]
        if len(path) == 1:
            if head in self.returns:
                return self.returns[head]
            if self.names.get(head, CALLABLE) != CALLABLE:
                return UNKNOWN  # a local name shadows the builtin
            if head in NUMBER_CALLS:
                return NUMBER
            return STR if head in STR_CALLS else SEQ if head in SEQ_CALLS else UNKNOWN
        if last in RNG_MAKERS and (self.name(head) == MODULE or head in ("np", "numpy", "random")):
            return RNG
        owner = self.name(head)
        if last in SAMPLERS and (owner == RNG or (owner == MODULE and "random" in path[:-1])):
            sized = any(k.arg == "size" for k in node.keywords)
            return ARRAY if sized else NUMBER
        if owner == MODULE:
            if head == "math" or path[:2] == ["math"]:
                return NUMBER
            if last in ARRAY_MAKERS:
                return ARRAY
            if last in REDUCTIONS and len(node.args) == 1 and not node.keywords:  # np.sum(a): no axis, a number
                return NUMBER
            if last in ELEMENTWISE and node.args and not node.keywords:  # np.sin(angle): a number
                kinds = [self.of(a) for a in node.args]
                return join_all(kinds) if all(k in NUMERIC for k in kinds) else UNKNOWN
        return UNKNOWN


def module_kinds(tree: ast.Module) -> dict[str, str]:
    """The kinds of a module's top-level names: imports, defs, classes and simple assignments."""
    kinds: dict[str, list[str]] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                name = alias.asname or alias.name.split(".")[0]
                kinds.setdefault(name, []).append(MODULE)
        elif isinstance(stmt, ast.ImportFrom):
            for alias in stmt.names:
                name = alias.asname or alias.name
                kinds.setdefault(name, []).append(NUMBER if alias.name in MODULE_CONSTANTS else CALLABLE)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            kinds.setdefault(stmt.name, []).append(CALLABLE)
    # top-level assignments only: not into the defs, whose locals are not module names
    top: list[ast.stmt] = [s for s in tree.body if isinstance(s, (ast.Assign, ast.AnnAssign))]
    return infer(top, {name: join_all(ks) for name, ks in kinds.items()}).names


def infer(
    stmts: list[ast.stmt], outer_kinds: Mapping[str, str] | None = None, params_of: ast.AST | None = None
) -> Kinds:
    """The kinds of the names bound or used in `stmts` (and `params_of`'s parameters), over `outer_kinds`."""
    outer = dict(outer_kinds or {})
    module = ast.Module(body=list(stmts), type_ignores=[])
    evidence: dict[str, list[str]] = {}
    usage: dict[str, list[str]] = {}
    for node in ([params_of] if params_of is not None else []) + [module]:
        for arguments in (n.args for n in ast.walk(node) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
            _parameters(arguments, evidence)
    for node in ast.walk(module):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            evidence.setdefault(node.name, []).append(CALLABLE)
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                usage.setdefault(func.id, []).append(CALLABLE)
            elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.attr in SAMPLERS:
                usage.setdefault(func.value.id, []).append(RNG)
    for name in _iterated(module) - _in_arithmetic(module):
        usage.setdefault(name, []).append(SEQ)
    kinds = Kinds(dict(outer))
    for _ in range(3):  # later passes see names assigned from names an earlier pass typed
        found: dict[str, list[str]] = {name: list(ks) for name, ks in evidence.items()}
        for node in ast.walk(module):
            _assignment(node, kinds, found)
        names = dict(outer)
        for name, ks in found.items():
            names[name] = join_all(ks)
        for name, ks in usage.items():
            if name not in found and outer.get(name, UNKNOWN) == UNKNOWN:
                names[name] = join_all(ks)
        kinds = Kinds(names, _returns(module, Kinds(names)))
    return kinds


def _iterated(module: ast.Module) -> set[str]:
    """Names looped over (`for a in xs`, a comprehension's `in xs`) or given to zip()/enumerate()/sorted()."""
    out: set[str] = set()
    for node in ast.walk(module):
        if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)) and isinstance(node.iter, ast.Name):
            out.add(node.iter.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in ("zip", "enumerate", "sorted", "reversed"):
                out |= {a.id for a in node.args if isinstance(a, ast.Name)}
    return out


def _in_arithmetic(module: ast.Module) -> set[str]:
    """Names that are an operand of arithmetic themselves (`bins - item`): numbers or arrays, whatever else."""
    out: set[str] = set()
    for node in ast.walk(module):
        if isinstance(node, ast.BinOp):
            out |= {side.id for side in (node.left, node.right) if isinstance(side, ast.Name)}
        elif isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Name):
            out.add(node.operand.id)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
    return out


def _parameters(arguments: ast.arguments, evidence: dict[str, list[str]]) -> None:
    positional = arguments.posonlyargs + arguments.args
    defaults = dict(zip([a.arg for a in positional[len(positional) - len(arguments.defaults) :]], arguments.defaults))
    defaults |= {a.arg: d for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None}
    for arg in positional + arguments.kwonlyargs:
        kind = _annotation(arg.annotation)
        if kind == UNKNOWN and arg.arg in defaults:
            kind = Kinds().of(defaults[arg.arg])
        if kind not in (UNKNOWN, NONE):
            evidence.setdefault(arg.arg, []).append(kind)


def _annotation(node: ast.expr | None) -> str:
    if node is None:
        return UNKNOWN
    if isinstance(node, ast.Subscript):
        node = node.value
    path = _dotted(node)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        path = node.value.split("[")[0].split(".")
    return ANNOTATIONS.get(path[-1], UNKNOWN) if path else UNKNOWN


def _assignment(node: ast.AST, kinds: Kinds, found: dict[str, list[str]]) -> None:
    if isinstance(node, ast.Assign):
        for target in node.targets:
            _bind(target, node.value, kinds, found)
    elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
        _bind(node.target, node.value, kinds, found)
    elif isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.target, ast.Name):
        it = node.iter
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range":
            found.setdefault(node.target.id, []).append(NUMBER)


def _bind(target: ast.expr, value: ast.expr, kinds: Kinds, found: dict[str, list[str]]) -> None:
    if isinstance(target, ast.Name):
        found.setdefault(target.id, []).append(kinds.of(value))
    elif isinstance(target, (ast.Tuple, ast.List)):
        same = isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)
        for i, elt in enumerate(target.elts):
            if isinstance(elt, ast.Name):
                found.setdefault(elt.id, []).append(kinds.of(value.elts[i]) if same else UNKNOWN)  # type: ignore[attr-defined]


def _returns(module: ast.Module, kinds: Kinds) -> dict[str, str]:
    out: dict[str, str] = {}
    for node in ast.walk(module):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            values = [r.value for r in ast.walk(node) if isinstance(r, ast.Return) and r.value is not None]
            if values:
                out[node.name] = join_all(kinds.of(v) for v in values)
    return out
