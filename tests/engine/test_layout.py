"""The house's shape, as DESIGN.md draws it: engine/ shows its two halves, and imports flow one way.

The front (engine/front: the command line, building or reopening a run, what
it prints) may import the loop (engine/loop: schedule, expand, evaluate,
finish); the loop never imports the front; the parts below both (mutators,
the LLM client, the gateway, the sandboxes) import neither. Imports inside
functions count: a lazy import that points the wrong way is still a circle
waiting to happen.
"""

from __future__ import annotations

import ast
from pathlib import Path

from engine.pyast import parse  # ast.parse that survives other threads' parses (cpython#106905)
from tests.conftest import REPO

ENGINE = REPO / "engine"
BELOW = ("mutators", "llm", "gateway", "sandbox")


def imported(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return {name for name in found if name == "engine" or name.startswith("engine.")}


def modules_of(package: str) -> list[Path]:
    return sorted((ENGINE / package).rglob("*.py"))


def test_engine_keeps_about_ten_modules_at_its_top():
    top = sorted(p.name for p in ENGINE.glob("*.py"))
    assert len(top) <= 10, top
    assert {"search.py", "runs.py", "snapshot.py"} <= set(top)  # the commands users type stay where they are
    assert (ENGINE / "front").is_dir() and (ENGINE / "loop").is_dir()


def test_the_loop_never_imports_the_front():
    wrong = {
        str(p.relative_to(REPO)): sorted(m for m in imported(p) if m.startswith("engine.front"))
        for p in modules_of("loop")
    }
    assert {k: v for k, v in wrong.items() if v} == {}


def test_what_is_below_imports_neither_half():
    wrong = {}
    for package in BELOW:
        for path in modules_of(package):
            bad = sorted(m for m in imported(path) if m.startswith(("engine.front", "engine.loop")))
            if bad:
                wrong[str(path.relative_to(REPO))] = bad
    assert wrong == {}


def test_no_function_is_over_sixty_lines_or_eight_parameters():
    """The house's rule (README, Development): small functions, few arguments (self aside)."""
    over = []
    for package in ("engine", "search", "archive"):
        for path in sorted((REPO / package).rglob("*.py")):
            for node in ast.walk(parse(path.read_text(), str(path))):
                if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                args = node.args
                names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
                count = len(names) - (1 if names and names[0] in ("self", "cls") else 0)
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if count > 8 or lines > 60:
                    where = f"{path.relative_to(REPO)}:{node.lineno} {node.name}"
                    over.append(f"{where}: {count} parameters, {lines} lines")
    assert over == []
