"""The numeric operator: a (1+1)-ES step on the region's float literals, its step size set by the 1/5th rule.

Continuous tasks (circle packing, OpenEvolve's and ShinkaEvolve's examples)
often improve by retuning the constants a program already has. This operator
moves every float literal of the mutable region (the EVOLVE-BLOCK, or the
entry function) at once, as one mutation of a (1+1) evolution strategy:

    x_i' = x_i + sigma' * s_i * N_i(0, 1),   s_i = max(|x_i|, 1)
    sigma' = sigma * exp(tau * N(0, 1)),      tau = 1 / sqrt(2 n)
    sigma  = SIGMA0 * exp((better - tried / 5) / (d (1 - 1/5))),  d = 1 + n / 2

n is the number of literals moved; s_i makes a step relative to a literal's
magnitude but never smaller than an absolute one, so a constant near 0 can
still cross it (a coordinate-wise scale: no covariance, no linear algebra).
sigma follows Rechenberg's 1/5th success rule in the form of Kern et al.,
"Learning probability distributions in continuous evolutionary algorithms"
(Natural Computing 2004): each numeric child better than its parent
multiplies it by exp(4/5 / (4/5 d)), each other child by exp(-1/5 / (4/5 d)),
so it grows while more than one step in five succeeds and shrinks otherwise.
`better` and `tried` are the run's record of numeric children (the offline
mutator's operator credit, rebuilt from the archive on resume), so the step
size is the run's, whichever node is expanded. The lognormal factor
(mutative self-adaptation, Beyer and Schwefel, "Evolution strategies: a
comprehensive introduction", Natural Computing 2002) spreads the steps of
children drawn at the same moment over scales. Half of the steps are also
scaled by a log-uniform factor in [1/30, 1]: a constant someone already
tuned gains only within a percent or two, where a step of the first size
(0.1) lands almost never (metric_value_sine's parabola: 1.8 % of the seed's
numeric children improved on it, 12 % with the fine steps; issue 30), while
the other half keep the run's full step. sigma' is written in the
child's description (`numeric sigma=0.0832 ...`); it stays within
[SIGMA_MIN, SIGMA_MAX].

Bounds are constraints the author wrote (`np.clip(centers, 0.01, 0.99)`
keeps circles in their square, `np.maximum(radii, 0.0)` radii
non-negative), and a step that moves every literal at once moved one of
them in almost every child: of 192 numeric children of ShinkaEvolve's
circle-packing seed, 181 placed a circle outside the square or two circles
overlapping (checked in-process as its evaluator does; issue 30). So a zero
bound of `np.maximum` or `np.minimum` (a sign constraint; other literals
there, such as the `maximum` wrapper's, are tuning) is left to `const`, and
a literal bound of `np.clip` only narrows its range (the lower one rises, the
upper one falls, by at most a quarter of the range): a narrower range stays
within what the evaluator accepted, and narrowing is how the search packed
OpenEvolve's circles better (`np.clip(centers, 0.07, 0.94)` in the best
programs).

Integer literals are left alone: in these programs they are counts, indices
and shapes (`np.arange(26)`, `k // 5`), and a fractional count breaks the
program rather than tuning it. Literals are written with 6 significant
digits, so a small step is not rounded away.
"""

from __future__ import annotations

import ast
import math

import numpy as np

from engine.mutators.sites import Sites, Slot, call_name

SIGMA0 = 0.1
SIGMA_MIN = 1e-4
SIGMA_MAX = 1.0
MIN_SCALE = 1.0
DIGITS = 6
BOUNDS = frozenset({"maximum", "minimum"})  # a zero literal of these is a sign constraint, left to `const`
FINE_SHARE = 0.5  # the share of steps also scaled by a log-uniform factor in [10**-FINE_DECADES, 1]
FINE_DECADES = 1.5


def float_slots(sites: Sites) -> list[Slot]:
    """Slots holding a float literal (`0.5`, `-1.25`), each once (a negated literal is one slot, not two), but
    not a zero bound of `np.maximum` or `np.minimum` (module docstring)."""
    found = []
    negated = {
        id(s.node.operand)
        for s in sites.slots
        if isinstance(s.node, ast.UnaryOp) and isinstance(s.node.op, (ast.USub, ast.UAdd))
    }
    for slot in sites.slots:
        if id(slot.node) in negated:
            continue
        value = _float_value(slot.node)
        if value == 0.0 and isinstance(slot.parent, ast.Call) and call_name(slot.parent) in BOUNDS:
            continue  # `np.maximum(radii, 0.0)`: a sign constraint
        if value is not None and math.isfinite(value):
            found.append(slot)
    return found


def _float_value(node: ast.AST) -> float | None:
    if isinstance(node, ast.Constant) and type(node.value) is float:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _float_value(node.operand)
        if inner is not None:
            return -inner if isinstance(node.op, ast.USub) else inner
    return None


def literal(value: float) -> ast.expr:
    """A float literal with DIGITS significant digits (always a float: `2.0`, never `2`)."""
    value = float(f"{value:.{DIGITS}g}")
    node = ast.Constant(abs(value))
    return ast.UnaryOp(op=ast.USub(), operand=node) if math.copysign(1.0, value) < 0 else node


def step_size(success: tuple[float, float] | None, n: int) -> float:
    """sigma by the 1/5th rule from the run's (better, tried) numeric children, for n literals (module docstring)."""
    better, tried = success or (0.0, 0.0)
    d = 1.0 + n / 2.0
    exponent = (better - tried / 5.0) / (d * 0.8)
    return min(max(SIGMA0 * math.exp(min(exponent, 50.0)), SIGMA_MIN), SIGMA_MAX)


def op_numeric(sites: Sites, rng: np.random.Generator, success: tuple[float, float] | None = None) -> str | None:
    """One ES step on every float literal; None when the region has none. `success`: (better, tried) of the
    run's numeric children so far, for the 1/5th rule."""
    slots = float_slots(sites)
    if not slots:
        return None
    tau = 1.0 / math.sqrt(2.0 * len(slots))
    spread = math.exp(tau * rng.normal())
    if rng.random() < FINE_SHARE:
        spread *= 10.0 ** -rng.uniform(0.0, FINE_DECADES)
    new_sigma = min(max(step_size(success, len(slots)) * spread, SIGMA_MIN), SIGMA_MAX)
    old = np.array([_float_value(s.node) for s in slots], dtype=float)
    step = new_sigma * np.maximum(np.abs(old), MIN_SCALE) * rng.normal(size=len(slots))
    for i, slot in enumerate(slots):
        inward = _clip_bound(slot)
        if inward is not None:  # a clip's bound only narrows its range, by at most a quarter of it
            side, room = inward
            step[i] = side * min(abs(step[i]), room / 4.0)
    changes = []
    for slot, before, after in zip(slots, old, old + step):
        node = literal(float(after))
        written = _float_value(node)
        if written is None or written == before or restricted_sign_change(slot, before, written):
            continue
        slot.replace(node)
        changes.append(f"{before:.4g}->{written:.4g}")
    if not changes:
        return None
    shown = ", ".join(changes[:6]) + (f", ... ({len(changes)} moved)" if len(changes) > 6 else "")
    return f"numeric sigma={new_sigma:.4g} {shown}"


def _clip_bound(slot: Slot) -> tuple[float, float] | None:
    """For a literal bound of `np.clip(x, lo, hi)`: the direction that narrows the range (+1 for lo, -1 for hi)
    and the range's width (inf when the other bound is not a literal); None for any other literal."""
    parent = slot.parent
    if not (isinstance(parent, ast.Call) and call_name(parent) == "clip" and slot.field == "args"):
        return None
    if slot.index not in (1, 2) or len(parent.args) < 3:
        return None
    lo, hi = _float_value(parent.args[1]), _float_value(parent.args[2])
    room = hi - lo if lo is not None and hi is not None else math.inf
    return (1.0 if slot.index == 1 else -1.0), max(room, 0.0)


def restricted_sign_change(slot: Slot, before: float, after: float) -> bool:
    """A literal in a guarded slot (a denominator, a log or sqrt argument) must not cross zero."""
    return slot.restricted is not None and (after <= 0.0 < before or after >= 0.0 > before)
