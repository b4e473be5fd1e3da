"""Is a child worth evaluating? A static check: `compile()` and the AST, never exec.

`check_child` returns None for an acceptable child, else one line saying why
not. It rejects, in this order:

- the entry file missing, or too large;
- a syntax error in any `.py` file (with file and line);
- the entry function missing as a top-level `def` of the entry file;
- its positional parameters no longer starting with the task's entry
  arguments (extra positional parameters need defaults; keyword-only ones too);
- module-level code that would run on import and is not a definition: loops,
  `with`, `raise`, `match`, expression statements other than docstrings and
  calls (a call such as `load_dotenv()` is common in real agents, so it stays);
  the body of `if __name__ == "__main__":` is not checked;
- a name read in a top-level function of the entry file that nothing binds
  (conservative, see `scope`: it never flags a correct program, it does not
  catch use-before-assignment).

What a static check cannot see (a wrong return shape, a runtime error) is the
sandbox's job.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence

from engine import pyast
from engine.mutators.scope import module_bindings, undefined_names

MAX_SOURCE_CHARS = 1_000_000

_RUNS_ON_IMPORT = {
    ast.For: "for loop",
    ast.AsyncFor: "for loop",
    ast.While: "while loop",
    ast.With: "with block",
    ast.AsyncWith: "with block",
    ast.Raise: "raise",
    ast.Match: "match block",
}


def check_child(
    files: Mapping[str, str], entry_file: str, entry_function: str, entry_args: Sequence[str]
) -> str | None:
    """None when the child is acceptable, else one line saying why not."""
    from engine.lang.registry import language_of

    if language_of(entry_file) is not None:  # a program in another language (engine/lang): parse, markers
        from engine.lang.check import child_problem

        return child_problem(files, entry_file)
    if entry_file not in files:
        return f"entry file {entry_file} missing"
    for path in sorted(p for p in files if p.endswith(".py") or p == entry_file):
        reason = _compile_error(path, files[path])
        if reason:
            return reason
    tree = pyast.parse(files[entry_file], filename=entry_file)
    func = _entry_def(tree, entry_function)
    if func is None:
        return f"entry function {entry_function} missing from {entry_file} (no top-level def)"
    reason = _signature_error(func, tuple(entry_args))
    if reason:
        return reason
    reason = _module_code_error(tree.body, entry_file)
    if reason:
        return reason
    return _undefined_name_error(tree, entry_file)


def _compile_error(path: str, source: str) -> str | None:
    if len(source) > MAX_SOURCE_CHARS:
        return f"{path} too large ({len(source)} characters > {MAX_SOURCE_CHARS})"
    try:
        compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return f"syntax error in {path} line {exc.lineno}: {exc.msg}"
    except (ValueError, RecursionError, MemoryError) as exc:
        return f"{path} does not compile: {type(exc).__name__}: {exc}".splitlines()[0]
    return None


def _entry_def(tree: ast.Module, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    found = None
    for node in tree.body:  # the last definition is the one Python keeps
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            found = node
    return found


def signature(func: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    args = func.args
    parts = [a.arg for a in args.posonlyargs + args.args]
    if args.vararg:
        parts.append("*" + args.vararg.arg)
    parts += [a.arg for a in args.kwonlyargs]
    if args.kwarg:
        parts.append("**" + args.kwarg.arg)
    return f"{func.name}({', '.join(parts)})"


def _signature_error(func: ast.FunctionDef | ast.AsyncFunctionDef, expected: tuple[str, ...]) -> str | None:
    args = func.args
    positional = [a.arg for a in args.posonlyargs + args.args]
    n_defaults = len(args.defaults)
    required = positional[: len(positional) - n_defaults] if n_defaults else positional
    kw_required = [a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is None]
    ok = tuple(positional[: len(expected)]) == expected and len(required) <= len(expected) and not kw_required
    if ok:
        return None
    want = f"{func.name}({', '.join(expected)})"
    return f"entry function signature changed: expected {want}, found {signature(func)} (line {func.lineno})"


def _is_main_guard(node: ast.If) -> bool:
    test = node.test
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def _module_code_error(body: list[ast.stmt], path: str) -> str | None:
    for node in body:
        kind = _RUNS_ON_IMPORT.get(type(node))
        if kind:
            return f"{path} line {node.lineno}: module-level {kind} would run on import"
        if isinstance(node, ast.Expr) and not isinstance(node.value, (ast.Constant, ast.Call)):
            return f"{path} line {node.lineno}: module-level expression statement has no effect"
        if isinstance(node, ast.If) and not _is_main_guard(node):
            reason = _module_code_error(node.body, path) or _module_code_error(node.orelse, path)
            if reason:
                return reason
        if isinstance(node, (ast.Try, ast.TryStar)):
            blocks = [node.body, node.orelse, node.finalbody] + [h.body for h in node.handlers]
            for block in blocks:
                reason = _module_code_error(block, path)
                if reason:
                    return reason
    return None


def _undefined_name_error(tree: ast.Module, path: str) -> str | None:
    names, star = module_bindings(tree)
    if star:
        return None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            missing = undefined_names(node, names)
            if missing:
                name, line = missing[0]
                return f"undefined name {name!r} in {node.name} ({path} line {line})"
    return None
