"""The state one mutation attempt works on: a private copy of the region.

Operators edit `Workspace.stmts` in place (they are deep copies of the parent's
region) and read the rest (the enclosing def, the module's names, the numpy
alias, crossover material) without changing it.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Mapping
from dataclasses import dataclass, field

from engine import pyast
from engine.mutators.kinds import Kinds, infer
from engine.mutators.region import Region
from engine.mutators.scope import BUILTIN_NAMES, function_bindings, loaded_names
from engine.mutators.shapes import Shapes
from engine.mutators.shapes import infer as infer_shapes
from engine.mutators.sites import FuncDef, Sites, collect


@dataclass(frozen=True)
class Graft:
    """A subexpression of a donor's region, offered to crossover."""

    node: ast.expr
    names: frozenset[str]  # the names it reads (after renaming the donor's numpy alias)
    rank: int  # the donor's position, 0 = best
    internal: bool  # not a bare name or constant (Koza's 90% internal-node rule)


@dataclass
class Workspace:
    stmts: list[ast.stmt]
    enclosing: FuncDef | None
    entry_function: str
    entry_args: tuple[str, ...]
    np_alias: str
    module_names: frozenset[str]
    grafts: tuple[Graft, ...] = ()
    preamble: frozenset[str] = field(default_factory=frozenset)  # names bound before a marked region
    module_kinds: Mapping[str, str] = field(default_factory=dict)  # kinds of the module's names (`kinds`)
    postamble: tuple[ast.stmt, ...] = ()  # the enclosing def's statements after a marked region (read only)

    @classmethod
    def from_region(
        cls,
        region: Region,
        entry_function: str,
        entry_args: tuple[str, ...],
        np_alias: str,
        module_names: frozenset[str],
        grafts: tuple[Graft, ...],
        module_kinds: Mapping[str, str] | None = None,
    ) -> Workspace:
        preamble: set[str] = set()
        postamble: list[ast.stmt] = []
        if region.enclosing is not None:
            preamble.update(a.arg for a in ast.walk(region.enclosing.args) if isinstance(a, ast.arg))
            for stmt in region.enclosing.body:
                if (stmt.end_lineno or stmt.lineno) < region.first_line:
                    preamble |= function_bindings(ast.Module(body=[stmt], type_ignores=[]))
                elif stmt.lineno > region.last_line:
                    postamble.append(stmt)
        return cls(
            copy.deepcopy(list(region.stmts)),
            region.enclosing,
            entry_function,
            entry_args,
            np_alias,
            module_names,
            grafts,
            frozenset(preamble),
            dict(module_kinds or {}),
            tuple(postamble),
        )

    def sites(self) -> Sites:
        return collect(self.stmts, self.enclosing)

    def params(self, func: FuncDef | None) -> list[str]:
        """Positional parameters of the def around a slot; the task's entry arguments for the entry function."""
        if func is None:
            return []
        if func.name == self.entry_function:
            return list(self.entry_args)
        return [a.arg for a in func.args.posonlyargs + func.args.args if a.arg not in ("self", "cls")]

    def live(self, func: FuncDef) -> ast.AST:
        """`func`'s code as the child will have it: the def around a marked region is the parent's node, so
        its region is read from the workspace's copies (its earlier statements are in `preamble`)."""
        if func is self.enclosing:
            return ast.Module(body=[*self.stmts, *self.postamble], type_ignores=[])
        return func

    def kinds(self) -> Kinds:
        """The kinds of the region's names as it reads now (`engine.mutators.kinds`)."""
        return infer(self.stmts, self.module_kinds, params_of=self.enclosing)

    def shapes(self, func: FuncDef | None, kinds: Kinds) -> Shapes:
        """The shape tags of `func`'s names as it reads now (the region's, outside any def)
        (`engine.mutators.shapes`)."""
        code = self.live(func) if func is not None else ast.Module(body=self.stmts, type_ignores=[])
        return infer_shapes(code, self.params(func), kinds)

    def names(self) -> set[str]:
        """Names a grafted expression may read (a conservative superset; `check_child` has the last word)."""
        names = set(self.module_names) | BUILTIN_NAMES | {self.np_alias} | set(self.preamble)
        names |= function_bindings(ast.Module(body=self.stmts, type_ignores=[]))
        return names

    def dump(self) -> str:
        return ast.dump(ast.Module(body=self.stmts, type_ignores=[]))

    def size(self) -> int:
        return sum(1 for _ in ast.walk(ast.Module(body=self.stmts, type_ignores=[])))

    def uses(self, name: str) -> bool:
        return name in loaded_names(ast.Module(body=self.stmts, type_ignores=[]))


def fresh(node: ast.expr) -> ast.expr:
    """A new, unshared copy of an expression, exactly as it will read once unparsed."""
    return pyast.parse_expression(ast.unparse(node))


def short(node: ast.AST, limit: int = 40) -> str:
    text = ast.unparse(node).replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 3] + "..."
