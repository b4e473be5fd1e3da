"""Offline mutation of a candidate in any known language, on its tree-sitter tree.

The same operators as the Python mutator, on the nodes every grammar has:
- a numeric literal perturbed: multiplied by exp(N(0, 0.5)) (a relative step),
  integers kept integers, floats kept floats (Rust and Go do not mix them), a
  type suffix kept (`1.5f`, `2.0d0`, `10_u32`);
- an operator swapped within its kind (+ - * /, < <= > >=);
- two adjacent statements of a block swapped, or one dropped.
Only nodes inside the EVOLVE-BLOCK region are touched (the whole file without
markers). A child must parse (engine.lang.syntax): a few tries are made, then
the mutator gives up with MutationError. Deterministic for a seed.
"""
from __future__ import annotations

import math
import re

import numpy as np

from engine.lang.markers import Region
from engine.lang.registry import Language
from engine.lang.syntax import parse, syntax_problem
from engine.mutators.base import MutationError

NUMBER_NODES = frozenset({"number_literal", "float_literal", "int_literal", "integer_literal"})
BINARY_NODES = frozenset({"binary_expression", "math_expression", "relational_expression"})
BLOCK_NODES = frozenset({"compound_statement", "block", "statement_list"})
ARITHMETIC = ("+", "-", "*", "/")
COMPARISON = ("<", "<=", ">", ">=")
_NUMBER = re.compile(r"^(?P<num>(?:\d[\d_]*)?\.?\d[\d_]*(?:[eE][+-]?\d+)?)(?P<suffix>[A-Za-z_][\w]*)?$")
TRIES = 12
WEIGHTS = {"number": 0.6, "operator": 0.25, "statements": 0.15}  # numbers first: most programs are tuned, not rewired


def mutate(source: str, language: Language, rng: np.random.Generator, region: Region | None = None
           ) -> tuple[str, str]:
    """(child source, what changed) with one operator applied inside `region`; MutationError if no child that
    parses could be made."""
    root = parse(source, language).root_node
    sites = _sites(root, region)
    if not any(sites.values()):
        raise MutationError(f"nothing to mutate in the {language.name} region (no number, operator or block)")
    data = source.encode("utf-8")
    for _ in range(TRIES):
        kinds = [k for k, nodes in sites.items() if nodes]
        weights = np.array([WEIGHTS[k] for k in kinds])
        kind = str(rng.choice(kinds, p=weights / weights.sum()))
        edit = getattr(_Operators, kind)(sites[kind], data, rng)
        if edit is None:
            continue
        start, end, text, said = edit
        child = (data[:start] + text.encode("utf-8") + data[end:]).decode("utf-8")
        if child != source and syntax_problem(child, language) is None:
            return child, said
    raise MutationError(f"no {language.name} child that parses in {TRIES} tries")


def _sites(root, region: Region | None) -> dict[str, list]:
    found: dict[str, list] = {"number": [], "operator": [], "statements": []}

    def inside(node) -> bool:
        return region is None or region.start_line < node.start_point[0] and node.end_point[0] < region.end_line

    def walk(node) -> None:
        if node.type in NUMBER_NODES and inside(node):
            found["number"].append(node)
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


class _Operators:
    @staticmethod
    def number(nodes, data: bytes, rng) -> tuple[int, int, str, str] | None:
        node = nodes[int(rng.integers(len(nodes)))]
        text = node.text.decode("utf-8")
        match = _NUMBER.match(text)
        if match is None:  # hexadecimal, a char, a literal with an exponent suffix we do not know: leave it
            return None
        digits, suffix = match["num"].replace("_", ""), match["suffix"] or ""
        is_float = any(c in digits for c in ".eE") or suffix.lower() in ("f", "d0", "f32", "f64", "_f64", "_f32")
        value = float(digits) * math.exp(float(rng.normal(0.0, 0.5)))
        if is_float:
            new = f"{value:.6g}"
            if not any(c in new for c in ".eE"):
                new += ".0"
        else:
            new = str(max(0, int(round(value))) if float(digits) >= 0 else int(round(value)))
            if new == digits:
                new = str(int(digits) + int(rng.choice([-1, 1])))
        return node.start_byte, node.end_byte, new + suffix, f"const {text}->{new + suffix}"

    @staticmethod
    def operator(nodes, data: bytes, rng) -> tuple[int, int, str, str] | None:
        node = nodes[int(rng.integers(len(nodes)))]
        op = node.text.decode("utf-8")
        family = ARITHMETIC if op in ARITHMETIC else COMPARISON
        other = str(rng.choice([o for o in family if o != op]))
        return node.start_byte, node.end_byte, other, f"swap_op {op}->{other}"

    @staticmethod
    def statements(blocks, data: bytes, rng) -> tuple[int, int, str, str] | None:
        block = blocks[int(rng.integers(len(blocks)))]
        k = int(rng.integers(len(block) - 1))
        first, second = block[k], block[k + 1]
        if rng.random() < 0.5:  # swap two neighbours, keeping what lies between them
            between = data[first.end_byte:second.start_byte].decode("utf-8")
            text = second.text.decode("utf-8") + between + first.text.decode("utf-8")
            return first.start_byte, second.end_byte, text, f"swap statements at line {first.start_point[0] + 1}"
        gone = block[int(rng.integers(len(block)))]
        return gone.start_byte, gone.end_byte, "", f"drop statement at line {gone.start_point[0] + 1}"
