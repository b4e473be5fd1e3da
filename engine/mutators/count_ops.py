"""The `count` operator: a multiplicative step on an integer literal that counts something.

A random search gets better with more samples, an optimizer with more
iterations or restarts, an evolutionary loop with a larger population: the
one change that helps such a program (issue 30: `for _ in range(50)` ->
100) is a count, and counts live on a log scale. `const` moves a literal by
an additive or lognormal step and may flip its sign or snap it to 0; for a
count that is mostly a broken program (0 samples, -50 iterations) or a
change too small to matter. Koza ("Genetic Programming", 1992) keeps such
numbers apart from the ephemeral random constants of the tree; FunSearch's
programs (Romera-Paredes et al., Nature 2024) improve by exactly such
edits of loop bounds and sample sizes. Here:

- which literals are counts (`count_literals`): positive int literals that
  are the stop of `range(...)` in a `for` loop or comprehension whose
  variable is not used as an index (`for _ in range(50)`; a loop over
  `r[i]` for i < 26 must keep its bound), the `size=` of any call
  (`rng.uniform(0, 1, size=100)`), a keyword argument, a parameter default or
  an assigned value whose name says it counts (`COUNT_NAME`: n, n_*,
  num_*, *_count, size, iterations, steps, samples, population, trials,
  epochs, max_iter, generations, restarts...). Left out on purpose: the
  shapes of `np.zeros(26)`/`np.arange(26)`, which in these programs are the
  problem's size (26 circles) more often than a knob;
- the step: x2, x0.5, x1.5 or x2/3 (equally likely), rounded, at least 1,
  always different from the old value, at most MAX_COUNT; a literal moves at
  most once per child, so one child changes any count by at most x2 (and
  bounded growth: k children in a row, at most x2**k, each paid for by the
  evaluator's time limit).

`const` leaves these literals to this operator.
"""

from __future__ import annotations

import ast
import re

import numpy as np

from engine.mutators.workspace import Workspace

FACTORS = (2.0, 0.5, 1.5, 2.0 / 3.0)
MAX_COUNT = 1_000_000
COUNT_NAME = re.compile(
    r"^(n|n_\w+|num_?\w+|\w+_count|count|size|\w*samples?|\w*pop(ulation)?(_size)?|batch_size|sample_size"
    r"|iterations?|iters?|max_\w*iters?|max_iterations|n?_?steps|max_steps|trials|n?_?trials|epochs|generations"
    r"|restarts|n?_?restarts|rounds|repeats|evals|max_evals|budget)$",
    re.IGNORECASE,
)
_MOVED = "_clade_count_moved"  # set on a literal this operator wrote: it moves once per child


def _positive_int(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value > 0


def _indexes_with(body: list[ast.AST], name: str) -> bool:
    """Is `name` used inside a subscript's index in `body`?"""
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Subscript):
                if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node.slice)):
                    return True
    return False


def _range_stop(call: ast.AST) -> tuple[ast.Call, int] | None:
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "range"):
        return None
    if call.keywords or not 1 <= len(call.args) <= 3:
        return None
    index = 0 if len(call.args) == 1 else 1
    return (call, index) if _positive_int(call.args[index]) else None


class CountSite:
    """Where a count literal sits: `parent.field[index]` (index None: a plain attribute)."""

    def __init__(self, parent: ast.AST, field: str, index: int | None, low: int = 1) -> None:
        self.parent, self.field, self.index, self.low = parent, field, index, low

    @property
    def node(self) -> ast.Constant:
        value = getattr(self.parent, self.field)
        return value if self.index is None else value[self.index]

    def replace(self, new: ast.Constant) -> None:
        if self.index is None:
            setattr(self.parent, self.field, new)
        else:
            getattr(self.parent, self.field)[self.index] = new


def count_sites(stmts: list[ast.stmt]) -> list[CountSite]:
    """Every count literal of `stmts` (module docstring), each once."""
    found: dict[int, CountSite] = {}

    def add(site: CountSite) -> None:
        if _positive_int(site.node):
            found.setdefault(id(site.node), site)

    for top in stmts:
        for node in ast.walk(top):
            loops: list[tuple[ast.expr, ast.expr, list[ast.AST]]] = []  # (target, iterable, where it is read)
            if isinstance(node, (ast.For, ast.AsyncFor)):
                loops.append((node.target, node.iter, list(node.body)))
            elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
                reads: list[ast.AST] = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
                loops += [(gen.target, gen.iter, reads + list(gen.ifs)) for gen in node.generators]
            for target, iterable, body in loops:
                stop = _range_stop(iterable)
                if stop and isinstance(target, ast.Name) and not _indexes_with(body, target.id):
                    call, index = stop
                    start = call.args[0]
                    low = (
                        start.value + 1
                        if index == 1 and isinstance(start, ast.Constant) and type(start.value) is int
                        else 1
                    )
                    add(CountSite(call, "args", index, max(low, 1)))
            if isinstance(node, ast.Call):
                for keyword in node.keywords:
                    if keyword.arg is not None and (keyword.arg == "size" or COUNT_NAME.match(keyword.arg)):
                        add(CountSite(keyword, "value", None))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = node.args
                positional = args.posonlyargs + args.args
                offset = len(positional) - len(args.defaults)
                for i in range(len(args.defaults)):
                    if COUNT_NAME.match(positional[offset + i].arg):
                        add(CountSite(args, "defaults", i))
                for i, (arg, default) in enumerate(zip(args.kwonlyargs, args.kw_defaults)):
                    if default is not None and COUNT_NAME.match(arg.arg):
                        add(CountSite(args, "kw_defaults", i))
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if len(targets) == 1 and isinstance(targets[0], ast.Name) and COUNT_NAME.match(targets[0].id):
                    add(CountSite(node, "value", None))
    return list(found.values())


def count_literals(stmts: list[ast.stmt]) -> set[int]:
    """The ids of the count literals' nodes, for `const` to leave alone."""
    return {id(site.node) for site in count_sites(stmts)}


def step(old: int, factor: float, low: int = 1) -> int | None:
    """The new count: old x factor rounded, within [low, MAX_COUNT], never old itself; None when none fits."""
    new = int(round(old * factor))
    if new == old:
        new = old + 1 if factor > 1 else old - 1
    new = min(max(new, low), MAX_COUNT)
    return None if new == old else new


def op_count(ws: Workspace, sites: object, rng: np.random.Generator) -> str | None:
    """Multiply one count of the region by x2, x0.5, x1.5 or x2/3 (module docstring)."""
    options = [s for s in count_sites(ws.stmts) if not getattr(s.node, _MOVED, False)]
    if not options:
        return None
    site = options[int(rng.integers(len(options)))]
    old = int(site.node.value)  # type: ignore[arg-type]  # count_sites keeps positive ints only
    factor = FACTORS[int(rng.integers(len(FACTORS)))]
    new = step(old, factor, site.low)
    if new is None:
        return None
    node = ast.Constant(new)
    setattr(node, _MOVED, True)
    site.replace(node)
    return f"count {old}->{new}"
