"""Kind inference and the operators that use it: operands of arithmetic stay numbers or arrays."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from engine.mutators import MutationContext, MutationError, OfflineMutator
from engine.mutators.ast_ops import op_insert, op_swap, op_wrap
from engine.mutators.crossover import donor_grafts, op_crossover
from engine.mutators.kinds import ARRAY, CALLABLE, NUMBER, RNG, SEQ, STR, UNKNOWN, infer, may_replace, module_kinds
from engine.mutators.workspace import Workspace

ROOT = Path(__file__).resolve().parents[3]
RANDOM_SEARCH = (ROOT / "tests/fixtures/tasks/openevolve_random_search/initial_program.py").read_text()

SNIPPET = """
import math
import numpy as np
from math import pi, sqrt


def go(f, rng, n: int, bins: np.ndarray, bounds=(-5, 5), label="x"):
    gen = np.random.default_rng(0)
    a = np.zeros(n)
    b = gen.uniform(0.0, 1.0, size=n)
    c = rng.normal()
    d = len(bins) + math.log(2.0)
    e = f(c)
    g = lambda t: t
    h = (c, d)
    best = None
    best = c
    return a, b
"""


def kinds_of(source: str):
    tree = ast.parse(source)
    func = next(s for s in tree.body if isinstance(s, ast.FunctionDef))
    return infer([func], module_kinds(tree))


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("f", CALLABLE),  # called
        ("rng", RNG),  # .normal() called on it
        ("gen", RNG),
        ("n", NUMBER),  # annotation
        ("bins", ARRAY),
        ("bounds", SEQ),  # default
        ("label", STR),
        ("a", ARRAY),
        ("b", ARRAY),  # a sampler with size=
        ("c", NUMBER),
        ("d", NUMBER),
        ("e", UNKNOWN),
        ("g", CALLABLE),
        ("h", SEQ),
        ("best", "none"),  # None, then a number: None on a loop's first pass
        ("np", "module"),
        ("sqrt", CALLABLE),
        ("pi", NUMBER),
    ],
)
def test_names_get_their_kind(name: str, kind: str) -> None:
    assert kinds_of(SNIPPET).name(name) == kind


def test_a_list_looped_over_is_a_sequence_an_array_in_arithmetic_is_not() -> None:
    source = (
        "def predict(train_x, train_y, x, bins):\n"
        "    n = len(train_x)\n"
        "    pairs = sum(a * b for a, b in zip(train_x, train_y))\n"
        "    fits = [b for b in bins]\n"
        "    return pairs / n + (bins - x).sum()\n"
    )
    kinds = kinds_of(source)
    assert kinds.name("train_x") == SEQ and kinds.name("train_y") == SEQ
    assert kinds.name("bins") == UNKNOWN and kinds.name("x") == UNKNOWN


def test_what_may_replace_what() -> None:
    assert may_replace(NUMBER, NUMBER) and may_replace(ARRAY, ARRAY) and may_replace(ARRAY, UNKNOWN)
    assert not may_replace(NUMBER, UNKNOWN)  # a number's place: only what is known to be one
    assert not may_replace(ARRAY, NUMBER)  # a number in place of an array loses its shape
    assert not may_replace(NUMBER, ARRAY)  # an array in place of a number gives a scalar a shape
    assert not may_replace(NUMBER, RNG) and not may_replace(NUMBER, CALLABLE) and not may_replace(NUMBER, SEQ)
    assert may_replace(RNG, RNG) and not may_replace(RNG, NUMBER)
    assert not may_replace(UNKNOWN, CALLABLE) and may_replace(UNKNOWN, NUMBER)
    assert not may_replace(UNKNOWN, "none") and not may_replace("none", "none")


def workspace(source: str, entry: str, args: tuple[str, ...], grafts=()) -> Workspace:
    tree = ast.parse(source)
    stmts = [s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == entry]
    return Workspace(stmts, None, entry, args, "np", frozenset({"np", "math"}), grafts, module_kinds=module_kinds(tree))


def test_swap_and_wrap_leave_strings_tuples_and_generators_alone() -> None:
    source = "import numpy as np\n\ndef show(rng):\n    line = '-' * 40\n    pair = (1, 2) * 2\n    return line\n"
    for seed in range(30):
        rng = np.random.default_rng(seed)
        ws = workspace(source, "show", ("rng",))
        assert op_swap(ws, ws.sites(), rng) is None
        assert op_wrap(ws, ws.sites(), rng) is None


def test_insert_builds_terms_from_numeric_arguments_only() -> None:
    source = "import numpy as np\n\ndef search(f, rng, scale):\n    x = rng.normal()\n    return f(x) * scale\n"
    used: set[str] = set()
    for seed in range(60):
        ws = workspace(source, "search", ("f", "rng", "scale"))
        assert op_insert(ws, ws.sites(), np.random.default_rng(seed)) is not None
        term = ws.stmts[0].body[-1].value.right  # the returned expression + the new term
        used |= {n.id for n in ast.walk(term) if isinstance(n, ast.Name)}
    assert "scale" in used and not used & {"f", "rng"}


def test_crossover_never_grafts_a_generator_or_a_function_into_arithmetic() -> None:
    donor = {"initial_program.py": RANDOM_SEARCH}
    grafts = donor_grafts([donor], "initial_program.py", "random_search", "np")
    assert any(ast.unparse(g.node) == "np.random.default_rng(seed)" for g in grafts)
    for seed in range(80):
        ws = workspace(RANDOM_SEARCH, "random_search", ("f",), grafts)
        said = op_crossover(ws, ws.sites(), np.random.default_rng(seed))
        if said is None:
            continue
        text = ast.unparse(ws.stmts[0])
        assert "default_rng(seed)" not in text.replace("rng = np.random.default_rng(seed)", "")
        assert "uniform(f" not in text and "- f" not in text and "f -" not in text


def test_children_of_a_random_search_never_mix_a_generator_and_a_function() -> None:
    """60 chained children of the issue's random search, each run: no TypeError from mixing operand kinds."""
    context = MutationContext("initial_program.py", "random_search", ("f",))
    mutator = OfflineMutator()
    rng = np.random.default_rng(7)
    pool = [RANDOM_SEARCH]
    type_errors = []
    for _ in range(60):
        parent = pool[int(rng.integers(len(pool)))]
        donors = ({"initial_program.py": pool[int(rng.integers(len(pool)))]},)
        try:
            child = mutator.propose({"initial_program.py": parent}, context, rng).files["initial_program.py"]
        except MutationError:
            continue
        pool.append(child)
        namespace: dict = {}
        exec(compile(child, "child", "exec"), namespace)  # a fixture program of ours: safe to run here
        try:
            namespace["random_search"](namespace["objective"], 0)
        except TypeError as error:
            type_errors.append(f"{error}")
        except Exception:  # noqa: BLE001 - other failures (a count of 0 ...) are not this test's
            pass
        del donors
    assert not [e for e in type_errors if "unsupported operand" in e or "not callable" in e], type_errors


GRID = """import numpy as np


def grid(n):
    side = int(np.ceil(np.sqrt(n)))
    k = np.arange(n)
    return np.stack([k % side, k // side], axis=1) * 0.5
"""


def test_crossover_never_puts_a_number_where_an_array_was() -> None:
    """ShinkaEvolve's spread fixture lost its shape this way: `np.arange(n) <- int(np.ceil(np.sqrt(n)))` made
    the points a scalar ("axis 1 is out of bounds" in its evaluator). Typed crossover refuses it."""
    donor = {"agent.py": GRID.replace("0.5", "0.25")}
    grafts = donor_grafts([donor], "agent.py", "grid", "np")
    assert any(ast.unparse(g.node) == "int(np.ceil(np.sqrt(n)))" for g in grafts)
    made = 0
    for seed in range(150):
        ws = workspace(GRID, "grid", ("n",), grafts)
        if op_crossover(ws, ws.sites(), np.random.default_rng(seed)) is None:
            continue
        made += 1
        scope: dict = {"np": np}
        exec(compile(ast.fix_missing_locations(ast.Module(ws.stmts, [])), "child", "exec"), scope)
        try:
            with np.errstate(all="ignore"):
                points = scope["grid"](12)
        except np.exceptions.AxisError:
            raise  # the points became a scalar: the bug
        except ValueError:
            continue  # two arrays of different ranks: a shape the kinds do not track, the evaluator's to judge
        assert np.ndim(points) >= 1, ast.unparse(ws.stmts[0])
    assert made > 50
