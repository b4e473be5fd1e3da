"""Offline mutation of a candidate in any known language, on its tree-sitter tree.

The Python mutator's operators (engine/mutators/offline.py), under the same
names so the run's operator credit counts them alike, on the nodes every
grammar has:
- `const`: one numeric literal multiplied by exp(N(0, 0.5)) (a relative
  step), integers kept integers, floats kept floats (Rust and Go do not mix
  them), a type suffix kept (`1.5f`, `2.0d0`, `10_u32`);
- `numeric`: the continuous tasks' ES step (engine/mutators/numeric.py: every
  float literal of the block moved at once, its step size from the run's
  numeric children by the 1/5th rule), always alone in its child;
- `swap_op`: an operator swapped within its kind (+ - * /, < <= > >=);
- `swap_stmt` / `delete`: two adjacent statements of a block swapped, or one
  dropped.
Only nodes inside the EVOLVE-BLOCK region are touched (the whole file without
markers). Operators are drawn by `weights` (the caller's credited weights,
else LANG_WEIGHTS). A child must parse (engine.lang.syntax): a few tries are
made, then the mutator gives up with MutationError. Deterministic for a seed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

import numpy as np

from engine.lang.markers import Region
from engine.lang.registry import Language
from engine.lang.syntax import parse, syntax_problem
from engine.mutators.base import MutationError
from engine.mutators.numeric import DIGITS, MIN_SCALE, SIGMA_MAX, SIGMA_MIN, step_size

NUMBER_NODES = frozenset({"number_literal", "float_literal", "int_literal", "integer_literal"})
BINARY_NODES = frozenset({"binary_expression", "math_expression", "relational_expression"})
BLOCK_NODES = frozenset({"compound_statement", "block", "statement_list"})
TYPE_NODES = frozenset({"kind"})  # Fortran's kind and len selectors: part of a type
ARITHMETIC = ("+", "-", "*", "/")
COMPARISON = ("<", "<=", ">", ">=")
_NUMBER = re.compile(r"^(?P<num>(?:\d[\d_]*)?\.?\d[\d_]*(?:[eE][+-]?\d+)?)(?P<suffix>[A-Za-z_][\w]*)?$")
FLOAT_SUFFIXES = ("f", "d0", "f32", "f64", "_f64", "_f32")
TRIES = 12
# Numbers first: most programs are tuned, not rewired. The site each operator works on:
LANG_WEIGHTS = {"const": 0.35, "numeric": 0.25, "swap_op": 0.25, "swap_stmt": 0.075, "delete": 0.075}
SITE_OF = {
    "const": "number",
    "numeric": "float",
    "swap_op": "operator",
    "swap_stmt": "statements",
    "delete": "statements",
}


def mutate(
    source: str,
    language: Language,
    rng: np.random.Generator,
    region: Region | None = None,
    weights: Mapping[str, float] | None = None,
    numeric_success: tuple[float, float] | None = None,
) -> tuple[str, str]:
    """(child source, what changed) with one operator applied inside `region`; MutationError if no child that
    parses could be made. `numeric_success`: the run's (better, tried) numeric children, for the ES step size."""
    root = parse(source, language).root_node
    sites = _sites(root, region)
    weights = weights or LANG_WEIGHTS
    names = [name for name in LANG_WEIGHTS if sites[SITE_OF[name]] and weights.get(name, 0.0) > 0]
    if not names:
        raise MutationError(f"nothing to mutate in the {language.name} region (no number, operator or block)")
    data = source.encode("utf-8")
    p = np.array([weights[name] for name in names])
    for _ in range(TRIES):
        name = names[int(rng.choice(len(names), p=p / p.sum()))]
        site = sites[SITE_OF[name]]
        edits = (
            _numeric(site, rng, numeric_success) if name == "numeric" else getattr(_Operators, name)(site, data, rng)
        )
        if not edits:
            continue
        child, said = _apply(data, edits)
        if child != source and syntax_problem(child, language) is None:
            return child, said
    raise MutationError(f"no {language.name} child that parses in {TRIES} tries")


def _apply(data: bytes, edits: tuple[list[tuple[int, int, str]], str]) -> tuple[str, str]:
    spans, said = edits
    for start, end, text in sorted(spans, reverse=True):  # from the end, so earlier offsets still hold
        data = data[:start] + text.encode("utf-8") + data[end:]
    return data.decode("utf-8"), said


def _in_type(node) -> bool:
    """Is the literal part of a type (Fortran's `real(8)`, `character(len=5)`)? Then it is no constant to tune:
    another kind number makes another, usually missing, type."""
    while node.parent is not None:
        node = node.parent
        if node.type in TYPE_NODES:
            return True
    return False


def _sites(root, region: Region | None) -> dict[str, list]:
    found: dict[str, list] = {"number": [], "float": [], "operator": [], "statements": []}

    def inside(node) -> bool:
        return region is None or region.start_line < node.start_point[0] and node.end_point[0] < region.end_line

    def walk(node) -> None:
        if node.type in NUMBER_NODES and inside(node) and not _in_type(node):
            found["number"].append(node)
            if _float_literal(node) is not None:
                found["float"].append(node)
        elif node.type in BINARY_NODES and inside(node):
            for child in node.children:  # the operator token (Julia's grammar names it `operator`)
                if child.child_count == 0 and child.text.decode("utf-8") in (*ARITHMETIC, *COMPARISON):
                    found["operator"].append(child)
        elif node.type in BLOCK_NODES and inside(node):
            statements = [c for c in node.named_children if "comment" not in c.type]
            if len(statements) >= 2:
                found["statements"].append(statements)
        for child in node.children:
            walk(child)

    walk(root)
    return found


def _split(text: str) -> tuple[str, str, bool] | None:
    """(digits, suffix, is a float) of a literal, or None for hexadecimal, chars and forms not known here."""
    match = _NUMBER.match(text)
    if match is None:
        return None
    digits, suffix = match["num"].replace("_", ""), match["suffix"] or ""
    return digits, suffix, any(c in digits for c in ".eE") or suffix.lower() in FLOAT_SUFFIXES


def _float_literal(node) -> tuple[float, str] | None:
    parts = _split(node.text.decode("utf-8"))
    if parts is None or not parts[2]:
        return None
    value = float(parts[0])
    return (value, parts[1]) if math.isfinite(value) else None


def _float_text(value: float, digits: int = 6) -> str:
    text = f"{value:.{digits}g}"
    return text if any(c in text for c in ".eEn") else text + ".0"


def _negated(node) -> bool:
    """Is the literal the operand of a unary minus (`-0.5`)? Then the sign is part of the value moved."""
    parent = node.parent
    return (
        parent is not None
        and "unary" in parent.type
        and parent.child_count == 2
        and parent.children[0].text == b"-"
        and parent.children[1] == node
    )


def _numeric(
    floats, rng: np.random.Generator, success: tuple[float, float] | None
) -> tuple[list[tuple[int, int, str]], str] | None:
    """engine/mutators/numeric.py's ES step on every float literal of the block, as byte edits.

    A negated literal (`-0.5`) moves as one signed value; a positive literal whose new value is negative is
    written in parentheses (`(-0.3)`), which every supported language reads after a binary operator."""
    tau = 1.0 / math.sqrt(2.0 * len(floats))
    sigma = min(max(step_size(success, len(floats)) * math.exp(tau * rng.normal()), SIGMA_MIN), SIGMA_MAX)
    spans, changes = [], []
    for node in floats:
        literal = _float_literal(node)
        assert literal is not None  # _sites keeps as floats only the literals that read as one
        value, suffix = literal
        negated = _negated(node)
        before = -value if negated else value
        after = float(f"{before + sigma * max(abs(before), MIN_SCALE) * rng.normal():.{DIGITS}g}")
        if after == before:
            continue
        span = node.parent if negated else node
        text = _float_text(abs(after), DIGITS) + suffix
        if after < 0:
            text = "-" + text if negated else f"(-{text})"
        spans.append((span.start_byte, span.end_byte, text))
        changes.append(f"{before:.4g}->{after:.4g}")
    if not spans:
        return None
    shown = ", ".join(changes[:6]) + (f", ... ({len(changes)} moved)" if len(changes) > 6 else "")
    return spans, f"numeric sigma={sigma:.4g} {shown}"


class _Operators:
    @staticmethod
    def const(nodes, data: bytes, rng) -> tuple[list[tuple[int, int, str]], str] | None:
        node = nodes[int(rng.integers(len(nodes)))]
        text = node.text.decode("utf-8")
        parts = _split(text)
        if parts is None:  # hexadecimal, a char, a literal with an exponent suffix we do not know: leave it
            return None
        digits, suffix, is_float = parts
        value = float(digits) * math.exp(float(rng.normal(0.0, 0.5)))
        if is_float:
            new = _float_text(value)
        else:
            new = str(max(0, int(round(value))) if float(digits) >= 0 else int(round(value)))
            if new == digits:
                new = str(int(digits) + int(rng.choice([-1, 1])))
        return [(node.start_byte, node.end_byte, new + suffix)], f"const {text}->{new + suffix}"

    @staticmethod
    def swap_op(nodes, data: bytes, rng) -> tuple[list[tuple[int, int, str]], str] | None:
        node = nodes[int(rng.integers(len(nodes)))]
        op = node.text.decode("utf-8")
        family = ARITHMETIC if op in ARITHMETIC else COMPARISON
        other = str(rng.choice([o for o in family if o != op]))
        return [(node.start_byte, node.end_byte, other)], f"swap_op {op}->{other}"

    @staticmethod
    def swap_stmt(blocks, data: bytes, rng) -> tuple[list[tuple[int, int, str]], str] | None:
        """Two neighbours swapped, keeping what lies between them."""
        block = blocks[int(rng.integers(len(blocks)))]
        k = int(rng.integers(len(block) - 1))
        first, second = block[k], block[k + 1]
        between = data[first.end_byte : second.start_byte].decode("utf-8")
        text = second.text.decode("utf-8") + between + first.text.decode("utf-8")
        return [(first.start_byte, second.end_byte, text)], f"swap_stmt at line {first.start_point[0] + 1}"

    @staticmethod
    def delete(blocks, data: bytes, rng) -> tuple[list[tuple[int, int, str]], str] | None:
        block = blocks[int(rng.integers(len(blocks)))]
        gone = block[int(rng.integers(len(block)))]
        return [(gone.start_byte, gone.end_byte, "")], f"delete statement at line {gone.start_point[0] + 1}"
