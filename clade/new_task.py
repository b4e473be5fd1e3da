"""`clade new-task DIR --format F [--language L]`: write a task folder in another engine's format, ready to run.

Each format gets its own small problem, with a seed that runs as written and leaves room to improve:

- openevolve: fit a cooling curve to sixteen thermometer readings (`evaluator.py`, `config.yaml`,
  `initial_program.<ext>`);
- shinka (ShinkaEvolve): pack six circles into the unit square, the largest sum of radii (`evaluate.py`,
  `README.md`, `initial.<ext>`);
- metric_value: a four-point quadrature rule, its mean relative error printed by `benchmark.py`;
- public_private: label points from a training set; `grade.py` scores the submission outside the sandbox.

The files are package data under clade/templates/<format>/. The two evaluators that run the program
(openevolve, shinka) share the build-and-run part (templates/shared/run_program.py), pasted in at their
`# @@RUN_PROGRAM@@` line, so a folder stands alone. A folder that exists and is not empty is refused:
nothing is ever overwritten.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from engine.errors import EXIT_USER_ERROR

PROG = "clade new-task"
PYTHON = "python"
# the languages whose evaluator compiles or starts the program with a tool on PATH (named in a note when absent)
TOOLS = {"c": "gcc", "cpp": "g++", "rust": "rustc", "go": "go", "fortran": "gfortran", "julia": "julia"}


@dataclass(frozen=True)
class Format:
    name: str
    problem: str  # one line: what the task asks
    program: str | None  # the program's stem when it may be in another language (initial_program.<ext>), else None
    files: dict[str, str]  # template file -> what it is, for the listing; the program comes first, apart


FORMATS: dict[str, Format] = {
    "openevolve": Format(
        "openevolve",
        "fit a cooling curve to sixteen thermometer readings (combined_score = 1 / (1 + RMSE))",
        "initial_program",
        {
            "evaluator.py": "evaluate(program_path) -> metrics, OpenEvolve's convention; builds and runs the program",
            "config.yaml": "OpenEvolve's config: the language, the evaluator's timeout, the task told to the model",
        },
    ),
    "shinka": Format(
        "shinka",
        "pack six circles into the unit square (combined_score = the sum of their radii)",
        "initial",
        {
            "evaluate.py": "ShinkaEvolve's evaluator: writes metrics.json and correct.json",
            "README.md": "the task, as the model reads it",
        },
    ),
    "metric_value": Format(
        "metric_value",
        "integrate smooth functions with four evaluations each (error: the mean relative error, lower is better)",
        None,
        {
            "initial_solution.py": "the program under evolution: integrate(f, a, b)",
            "benchmark.py": "runs the solution and prints `error: <value>`",
            "config.py": "the task's name, its metric and which way is better",
        },
    ),
    "public_private": Format(
        "public_private",
        "label points from a training set (accuracy against hidden labels, graded outside the sandbox)",
        None,
        {
            "solution.py": "the program under evolution: reads data/public/, writes submission.csv",
            "grade.py": "grade(submission, private_dir) -> accuracy, run by Clade outside the sandbox",
            "data/public/task.md": "the task, as the model reads it",
            "data/public/train.csv": "120 labelled points",
            "data/public/test.csv": "80 points to label",
            "data/private/answers.csv": "their labels: never shown to the program",
        },
    ),
}


def extension(language: str) -> str:
    """A language's file extension: the first one engine/lang knows it by (.py for Python)."""
    from engine.lang.registry import language_of

    known = language_of("", named=language)
    return ".py" if language == PYTHON or known is None else known.extensions[0]


def languages(fmt: Format) -> tuple[str, ...]:
    """What Clade's adapter for the format reads: Python, and for OpenEvolve and ShinkaEvolve folders every
    language engine/lang parses (tasks/adapters.program_file)."""
    if fmt.program is None:
        return (PYTHON,)
    from engine.lang.registry import LANGUAGES

    return (PYTHON, *(lang.name for lang in LANGUAGES))


def all_languages() -> tuple[str, ...]:
    return tuple(dict.fromkeys(lang for fmt in FORMATS.values() for lang in languages(fmt)))


def _template(fmt: str, name: str) -> str:
    return resources.files("clade").joinpath("templates", fmt, name).read_text(encoding="utf-8")


def rendered(fmt: Format, language: str) -> dict[str, str]:
    """The folder's files, path -> text, the program first."""
    files: dict[str, str] = {}
    if fmt.program is not None:
        program = fmt.program + extension(language)
        files[program] = _template(fmt.name, program)
    runner = _template("shared", "run_program.py").rstrip("\n")
    for name in fmt.files:
        text = _template(fmt.name, name).replace("# @@RUN_PROGRAM@@", runner)
        if fmt.program is not None:
            text = text.replace("@@LANGUAGE@@", language).replace("@@PROGRAM@@", fmt.program + extension(language))
        files[name] = text
    return files


class Refused(Exception):
    """A request new-task will not carry out; the message is one line."""


def refusal(target: Path, fmt: Format, language: str) -> str | None:
    """Why the folder cannot be written as asked, or None."""
    allowed = languages(fmt)
    if language not in allowed:
        return f"--format {fmt.name} takes --language {' | '.join(allowed)} (not {language})"
    if target.exists() and not target.is_dir():
        return f"{target} exists and is not a folder; new-task writes a new folder"
    if target.is_dir() and any(target.iterdir()):
        return f"{target} exists and is not empty; new-task never overwrites: name a new folder"
    return None


def write_task(target: str | Path, fmt_name: str, language: str = PYTHON) -> list[Path]:
    """Write the task folder; the paths written. Refused (one line) when the combination is not offered or
    the folder holds anything already."""
    target = Path(target)
    fmt = FORMATS[fmt_name]
    why = refusal(target, fmt, language)
    if why:
        raise Refused(why)
    written = []
    for name, text in rendered(fmt, language).items():
        path = target / name
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("x", encoding="utf-8") as fh:  # "x": a file that appeared meanwhile is never replaced
            fh.write(text)
        written.append(path)
    return written


def _listing(fmt: Format, language: str, written: list[Path], target: str) -> list[str]:
    about = dict(fmt.files)
    if fmt.program is not None:
        about[fmt.program + extension(language)] = "the program under evolution (its EVOLVE-BLOCK)"
    width = max(len(str(p)) for p in written)
    lines = [f"Wrote a task in the {fmt.name} format, its program in {language}: {fmt.problem}"]
    lines += [f"  {str(p):<{width}}  {about[p.relative_to(target).as_posix()]}" for p in written]
    tool = TOOLS.get(language)
    if tool and shutil.which(tool) is None:
        lines.append(f"note: its evaluator runs the program with {tool}, which is not on PATH here")
    lines.append(f"Next: clade search --task {shlex.quote(target)} --budget 10")
    return lines


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    """`clade new-task`'s options (also the reference page's source: docs/hooks)."""
    from clade.version import add_version_flag
    from engine.front.one_line import OneLineParser  # a bad flag: one line, exit 2, with a suggestion

    p = OneLineParser(
        prog=prog,
        description="Write a task folder in another engine's format (OpenEvolve, ShinkaEvolve, metric:value, "
        "public/private) that Clade runs as written: clade search --task DIR.",
    )
    p.add_argument("dir", metavar="DIR", help="the folder to write (new, or empty)")
    p.add_argument("--format", required=True, choices=list(FORMATS), help="the task folder's format")
    p.add_argument(
        "--language",
        default=PYTHON,
        choices=all_languages(),
        help="the program's language (default: python; openevolve and shinka take every one listed)",
    )
    add_version_flag(p)
    return p


def main(argv: Sequence[str] | None = None, prog: str = PROG) -> int:
    args = build_parser(prog).parse_args(argv)
    try:
        written = write_task(args.dir, args.format, args.language)
    except Refused as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    except OSError as exc:
        print(f"error: cannot write {args.dir}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    print("\n".join(_listing(FORMATS[args.format], args.language, written, args.dir)))
    return 0
