"""The built-in offline mutator: genetic programming on the AST of the entry function, no LLM.

A child is the parent with 1 + Geometric extra operators applied to the
mutable region of the entry file (see `region`): `const`, `swap_op`, `wrap`,
`insert`, `prune` (`ast_ops`), `delete`, `swap_stmt` (`stmt_ops`),
`crossover` (`crossover`) and `count` (`count_ops`: a multiplicative step on
an integer that counts samples, iterations, a population), or else one `numeric` step alone (a self-adaptive
ES step on every float literal, `numeric`). Operators are drawn by their
prior weight times their measured rate of children better than their parent
(`credited_weights`, from the context's `operator_credit`). This is Koza-style tree GP (Koza, "Genetic
Programming", 1992) aimed at the kind of programs FunSearch evolves
(Romera-Paredes et al., Nature 2024): a priority function whose returned
expression grows, loses and retunes terms.

Each attempt works on a fresh copy of the region; the child must differ from
the parent, stay under a size cap and pass `check_child`, otherwise another
attempt is drawn (up to `max_attempts`). All randomness comes from the
generator passed to `propose`, so the same parent, context and generator
state give the same proposal.

Failure mode (documented choice): `propose` never returns the parent
unchanged; when it cannot make a child (the entry file is missing or does not
parse, the markers are malformed, no attempt gave a valid child) it raises
`MutationError` with a one-line reason. Any unexpected exception inside is
also turned into a `MutationError`.

The description is `"; "`-joined parts, each starting with the operator's
name, e.g. `"const 0.5->0.71; insert diff -0.7 * (bins - item)"`;
`operators_in` recovers the names.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from engine import pyast
from engine.mutators.ast_ops import op_const, op_insert, op_prune, op_swap, op_wrap
from engine.mutators.base import MutationContext, MutationError, Proposal, SyncMutator
from engine.mutators.count_ops import op_count
from engine.mutators.crossover import donor_grafts, op_crossover
from engine.mutators.flakes import new_name_problem
from engine.mutators.kinds import module_kinds
from engine.mutators.numeric import op_numeric
from engine.mutators.region import Region, find_region, splice
from engine.mutators.scope import module_bindings, numpy_alias
from engine.mutators.sites import Sites
from engine.mutators.stmt_ops import op_delete, op_swap_stmt
from engine.mutators.validate import check_child
from engine.mutators.workspace import Workspace

Operator = Callable[[Workspace, Sites, np.random.Generator], "str | None"]

OPERATORS: dict[str, Operator] = {
    "const": op_const,
    "swap_op": op_swap,
    "wrap": op_wrap,
    "insert": op_insert,
    "prune": op_prune,
    "delete": op_delete,
    "swap_stmt": op_swap_stmt,
    "crossover": op_crossover,
    "count": op_count,
}

NUMERIC = "numeric"  # the ES step (engine.mutators.numeric): always alone in its child
NAMES = (*OPERATORS, NUMERIC)

DEFAULT_WEIGHTS: dict[str, float] = {
    "const": 0.25,
    "swap_op": 0.08,
    "wrap": 0.08,
    "insert": 0.28,
    "prune": 0.08,
    "delete": 0.03,
    "swap_stmt": 0.03,
    "crossover": 0.15,
    "count": 0.12,
    NUMERIC: 0.25,
}

MAX_DESCRIPTION = 240


def operators_in(description: str) -> list[str]:
    """The operator names of a description made by `OfflineMutator`, in order."""
    return [part.split(" ", 1)[0] for part in description.split("; ") if part.split(" ", 1)[0] in NAMES]


def credited_weights(prior: Mapping[str, float], credit: Mapping[str, tuple[float, float]]) -> dict[str, float]:
    """Each operator's prior weight times its posterior mean rate of children better than their parent.

    Probability matching for adaptive operator selection (Goldberg 1990;
    Thierens, "An adaptive pursuit strategy for allocating operator
    probabilities", GECCO 2005): with `better` of `tried` children beating
    their parent, the rate's Beta(1, 1)-prior mean is (better + 1) / (tried + 2),
    so an operator nobody tried keeps its prior, and one that keeps breaking
    programs or changing nothing useful fades without vanishing.
    """
    weights = {}
    for name, weight in prior.items():
        better, tried = credit.get(name, (0.0, 0.0))
        weights[name] = weight * (better + 1.0) / (tried + 2.0)
    return weights


@dataclass
class OfflineMutator(SyncMutator):
    """Genetic-programming mutator; `name` "offline", `model` None.

    Knobs: a child gets 1 + k operators, P(k >= j) = `p_more`**j, at most
    `max_ops` in all; `max_attempts` bounds redraws when an attempt gives no
    valid, changed child; `max_nodes` caps the region's AST size (bloat
    control) unless the parent is already larger; `weights` sets how often
    each operator is drawn among those that apply (an operator left out is
    never drawn).
    """

    max_ops: int = 4
    p_more: float = 0.5
    max_attempts: int = 8
    max_nodes: int = 250
    weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    name: str = field(default="offline", init=False)
    model: str | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        unknown = set(self.weights) - set(NAMES)
        if unknown:
            raise ValueError(f"unknown operators in weights: {sorted(unknown)}")
        if self.max_ops < 1 or self.max_attempts < 1:
            raise ValueError("max_ops and max_attempts must be at least 1")

    def propose(self, parent_files: Mapping[str, str], context: MutationContext, rng: np.random.Generator) -> Proposal:
        try:
            return self._propose(parent_files, context, rng)
        except MutationError:
            raise
        except Exception as exc:  # a bug here must reach the archive as a reason, not end the run
            raise MutationError(f"offline mutator internal error: {type(exc).__name__}: {exc}"[:300]) from exc

    def _propose(self, parent_files: Mapping[str, str], context: MutationContext, rng: np.random.Generator) -> Proposal:
        source = parent_files.get(context.entry_file)
        if source is None:
            raise MutationError(f"parent has no entry file {context.entry_file}")
        from engine.lang.registry import language_of

        language = language_of(context.entry_file)
        if language is not None:  # another language: the same kinds of operators on its tree-sitter tree
            return _propose_in(language, parent_files, context, rng)
        try:
            tree = pyast.parse(source, filename=context.entry_file)
        except SyntaxError as exc:
            raise MutationError(
                f"parent's {context.entry_file} does not parse (line {exc.lineno}: {exc.msg})"
            ) from None
        region = find_region(source, tree, context.entry_function)
        alias, needs_import = _numpy_alias(tree, region)
        grafts = donor_grafts(context.donors, context.entry_file, context.entry_function, alias)
        module_names = frozenset(module_bindings(tree)[0])
        kinds = module_kinds(tree)
        parent_ws = Workspace.from_region(
            region, context.entry_function, tuple(context.entry_args), alias, module_names, grafts, kinds
        )
        parent_dump, size_cap = parent_ws.dump(), max(self.max_nodes, parent_ws.size())
        last = "no operator applies"
        rejected: Counter[str] = Counter()  # per operator, tries the static check threw away

        def child_of(ws: Workspace) -> tuple[dict[str, str], str | None]:
            """The child's files and why the static check refuses them (None: it does not)."""
            files = dict(parent_files)
            # on a copy: writing may insert the numpy import into the workspace's def
            written = dataclasses.replace(ws, stmts=copy.deepcopy(ws.stmts))
            files[context.entry_file] = _write(source, region, written, alias, needs_import)
            reason = check_child(
                files, context.entry_file, context.entry_function, context.entry_args
            ) or new_name_problem(parent_files, files)
            return files, reason

        for _ in range(self.max_attempts):
            ws = Workspace.from_region(
                region, context.entry_function, tuple(context.entry_args), alias, module_names, grafts, kinds
            )
            parts = self._apply(ws, rng, context, lambda w: child_of(w)[1], rejected)
            if not parts or ws.dump() == parent_dump:
                last = "no operator changed the code"
                continue
            if ws.size() > size_cap:
                last = f"child over {size_cap} AST nodes"
                continue
            files, reason = child_of(ws)
            if reason is None:
                return Proposal(files, _describe(parts), gate_rejected=dict(rejected))
            rejected.update(operators_in("; ".join(parts)))
            last = reason
        raise MutationError(
            f"no valid child in {self.max_attempts} attempts (last: {last})"[:300], gate_rejected=dict(rejected)
        )

    def _apply(
        self,
        ws: Workspace,
        rng: np.random.Generator,
        context: MutationContext,
        refused: Callable[[Workspace], str | None],
        rejected: Counter[str],
    ) -> list[str]:
        """Apply 1 + k operators to `ws`; the description of each. In a child of several operators, each
        step is checked as it is made (`refused`): one that breaks the program is undone and charged alone
        in `rejected`, and another operator is drawn for its step, so the others' work is kept and the
        gate's refusals are counted against the operator that caused them. A lone operator is checked by
        the caller."""
        weights = credited_weights(self.weights, context.operator_credit)
        n_ops = min(self.max_ops, int(rng.geometric(1.0 - self.p_more)))
        parts: list[str] = []
        for step in range(n_ops):
            sites = ws.sites()
            names = [k for k in NAMES if weights.get(k, 0.0) > 0 and (k != NUMERIC or step == 0)]
            while names:
                w = np.array([weights[k] for k in names])
                name = names[int(rng.choice(len(names), p=w / w.sum()))]
                if name == NUMERIC:  # an ES step is measured alone, so its step size earns its credit
                    part = op_numeric(sites, rng, context.operator_credit.get(NUMERIC))
                    if part is not None:
                        return [part]
                else:
                    before = copy.deepcopy(ws.stmts) if n_ops > 1 else None
                    part = OPERATORS[name](ws, sites, rng)
                    if part is not None and before is not None and refused(ws) is not None:
                        ws.stmts[:] = before
                        rejected[name] += 1
                        sites, part = ws.sites(), None
                    if part is not None:
                        parts.append(part)
                        break
                names.remove(name)
        return parts


def _numpy_alias(tree: ast.Module, region: Region) -> tuple[str, bool]:
    """numpy's name in the entry file, and whether the child must import it itself."""
    places = [tree.body, list(region.stmts)]
    if region.enclosing is not None:
        places.append(region.enclosing.body)
    places += [s.body for s in region.stmts if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for place in places:
        alias = numpy_alias(place)
        if alias is not None:
            return alias, False
    taken = module_bindings(tree)[0]
    return ("np" if "np" not in taken else "_np"), True


def _write(source: str, region: Region, ws: Workspace, alias: str, needs_import: bool) -> str:
    stmts = ws.stmts
    if needs_import and ws.uses(alias) and numpy_alias(stmts) is None:
        imp = ast.Import(names=[ast.alias(name="numpy", asname=alias)])
        if len(stmts) == 1 and isinstance(stmts[0], (ast.FunctionDef, ast.AsyncFunctionDef)) and not region.marked:
            body = stmts[0].body
            doc = 1 if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else 0
            body.insert(doc, imp)
        else:
            stmts = [imp] + stmts
    return splice(source, region, stmts)


def _describe(parts: list[str]) -> str:
    text = "; ".join(parts)
    return text if len(text) <= MAX_DESCRIPTION else text[: MAX_DESCRIPTION - 3] + "..."


def _propose_in(
    language, parent_files: Mapping[str, str], context: MutationContext, rng: np.random.Generator
) -> Proposal:
    """A child of a program in another language (engine/lang/mutate.py), inside its EVOLVE-BLOCK, its operators
    drawn by the same credit as the Python ones (they share their names)."""
    from engine.lang.markers import MarkerError, evolve_region
    from engine.lang.mutate import LANG_WEIGHTS, mutate
    from engine.lang.syntax import GrammarMissing

    entry_file = context.entry_file
    source = parent_files[entry_file]
    weights = credited_weights(LANG_WEIGHTS, context.operator_credit)
    try:
        child, said = mutate(
            source, language, rng, evolve_region(source, language), weights, context.operator_credit.get(NUMERIC)
        )
    except (MarkerError, GrammarMissing) as exc:
        raise MutationError(f"{entry_file}: {exc}") from None
    return Proposal({**parent_files, entry_file: child}, said)
