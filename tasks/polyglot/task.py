"""Polyglot as a Clade task: the coding agent solves one Exercism exercise in C++, Go, Java, JavaScript, Python or
Rust, graded by the exercise's own tests (Aider's benchmark, reported by DGM and HGM).

An instance is one exercise (`python/affine-cipher`). An evaluation:
1. in the sandbox, the runner (RepoFix's, tasks/repofix/runner.py) calls the agent's `solve(problem)` with the
   instructions and the exercise in a workspace folder named after it (stub, tests, build files; never
   `.meta/`, which holds the reference solution); the agent edits the stub and may run the tests itself
   (`test_command`, the grader's own test run; `--agent-tests off` leaves it empty, as Aider's first try);
   then the runner writes answer.json with the workspace's solution and new source files;
2. in a fresh sandbox job of the same backend, check.py builds the original exercise with the answer's
   solution files in place (and new source files outside the tests: an edited or added test file never
   reaches it) and runs the track's tests, every test enabled, its verdict signed with a key the tests'
   processes cannot read;
3. here, the signature is checked: the score is 1 when the tests all pass (`resolved`), else 0, with the
   count of passing tests stored beside it.

The exercises folder is hidden from every sandbox under bwrap and absent under docker.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from engine.errors import UserError
from engine.sandbox.base import SandboxJob, SandboxLimits
from tasks.base import CheckedTask, CheckRun, Grade, Instance
from tasks.polyglot.exercises import LANGUAGE_NAMES, LANGUAGES, Exercise, all_exercises, split_of
from tasks.polyglot.instances import named, select
from tasks.repofix.task import (
    NOT_AN_ANSWER,
    TRAJECTORY_FILE,
    answer_of,
    coding_agent_files,
    coding_job_files,
    read_trajectory,
)
from tasks.signed_check import signed_by_the_job, signed_check_job

if TYPE_CHECKING:
    from engine.lang.toolchain import Toolchain
    from tasks.polyglot.toolchains import Found

HERE = Path(__file__).resolve().parent
TEST_SECONDS = 180  # each build or test command of one grading (check.py)
# V8 (a CodeRange per worker isolate), the JVM and Go reserve far more address space than they use, and the
# memory cap of bwrap and process is RLIMIT_AS: it is wide (64 GiB), the JVM's heap capped by JAVA_TOOL_OPTIONS.
# Processes: bank-account's tests start 1,000 threads at once (C++, Java).
CHECK_LIMITS = SandboxLimits(timeout_s=420.0, cpu_s=600, memory_mb=65536, file_size_mb=256, processes=2048)
JVM_OPTIONS = "-Xmx768m -Xss4m -XX:CompressedClassSpaceSize=128m -XX:ReservedCodeCacheSize=64m -XX:+UseSerialGC"

DESCRIPTION = """\
Polyglot: solve one programming exercise (Exercism's, as Aider selected them: 225 in C++, Go, Java,
JavaScript, Python and Rust) so that its own tests pass. The runner calls `solve(problem)` once per
exercise; `problem` is a dict with "instance_id" ("python/affine-cipher"), "language", "statement"
(the exercise's instructions, which files to edit, and how the tests run), "workspace" (the folder
holding the exercise: the stub to edit, the tests, the build files; edit its files in place),
"solution_files" (the files to edit), "test_command" (runs the exercise's tests from the workspace as
grading does and prints their output; empty when the run does not let the agent run them) and
"trajectory_file" (a JSON-lines file for the agent's steps). Afterwards the exercise's original tests
run on the solution files (and on new source files the agent added outside the tests): editing tests
gains nothing. An instance is resolved (score 1) when every test passes. The agent may call a language
model: `import clade_llm` and `clade_llm.chat(messages, temperature=..., max_tokens=...)` returns the
answer's text.
Calls are limited per instance in tokens; no network in the sandbox; subprocesses are allowed."""


class PolyglotTask(CheckedTask):
    name = "polyglot"
    description = DESCRIPTION
    entry_file = "agent.py"
    entry_function = "solve"
    entry_args = ("problem",)
    answer_file = "answer.json"
    raw_metric = "resolved %"
    raw_metric_note = "resolved % = exercises whose tests all pass with the agent's solution, in percent"
    score_note = "a score is 1 when every test of the exercise passes, else 0"
    limits = SandboxLimits(timeout_s=600.0, cpu_s=600, memory_mb=65536, file_size_mb=256, processes=2048)
    agent_llm = "required"  # the agent calls a model: the run needs --agent-model or --model
    agent_max_tokens = 100_000  # per evaluation (one exercise), in + out

    def __init__(self, instances_path: str | None = None, root: Path | None = None, agent_tests: bool = True):
        self.instances_path = instances_path
        self._root = root
        self.agent_tests = agent_tests

    # ----- the exercises ----------------------------------------------------------------------------------
    @cached_property
    def root(self) -> Path:
        """The benchmark's folder (CLADE_POLYGLOT_DIR, else the verified cache, fetched on first use)."""
        if self._root is not None:
            return Path(self._root)
        from tasks.polyglot.source import exercises_dir

        return exercises_dir(say=_say)

    @cached_property
    def exercises(self) -> dict[str, Exercise]:
        return {e.id: e for e in all_exercises(self.root)}

    @cached_property
    def splits(self) -> dict[str, str]:
        """{exercise id: 'dev' | 'holdout'} (exercises.split_of)."""
        return split_of(list(self.exercises.values()))

    @cached_property
    def chosen(self) -> list[Exercise]:
        """The exercises of this run (`--instances`), in the order of `instances()`."""
        ids = select(self.exercises, self.splits, self.instances_path)
        return [self.exercises[i] for i in ids]

    @cached_property
    def found(self) -> Found:
        """The toolchains of the chosen exercises' languages (UserError, one line, for a missing one)."""
        from tasks.polyglot.toolchains import find_all

        return find_all(self.chosen, self.python, say=_say)

    def exercise(self, instance: Instance) -> Exercise:
        return self.exercises[instance.id]

    # ----- the Task protocol ------------------------------------------------------------------------------
    def seed_files(self) -> dict[str, str]:
        """The coding agent of RepoFix (agents_seed/coding_agent/): one agent for both."""
        return coding_agent_files(self.name, self.entry_file)

    def instances(self) -> list[Instance]:
        left_out = self.found.left_out
        refused = sorted(named(self.instances_path) & set(left_out))
        if refused:
            raise UserError(f"--instances names {refused[0]}, which cannot run here: {left_out[refused[0]]}")
        return [
            Instance(e.id, self.splits[e.id], {"language": e.language, "name": e.name})
            for e in self.chosen
            if e.id not in left_out
        ]

    def toolchains(self) -> tuple[Toolchain, ...]:
        return tuple(self.found.toolchains)

    def docker_image(self) -> str:
        from engine.sandbox.docker_build import POLYGLOT_IMAGE

        return POLYGLOT_IMAGE

    def setup_note(self) -> str:
        counts = {lang: sum(1 for e in self.chosen if e.language == lang) for lang in LANGUAGES}
        said = ", ".join(f"{n} {LANGUAGE_NAMES[lang]}" for lang, n in counts.items() if n)
        lines = [f"Polyglot {self.root} ({said}); tests run on (docker: the Polyglot image's own): "]
        lines[0] += "; ".join(self.found.said)
        lines += [f"left out {i}: {why}" for i, why in self.found.left_out.items()]
        return ". ".join(lines)

    def hidden_paths(self) -> tuple[str, ...]:
        return (str(self.root),)

    def sandbox_files(self, instance: Instance) -> dict[str, bytes]:
        exercise = self.exercise(instance)
        workspace = exercise.name
        problem = {
            "instance_id": instance.id,
            "language": exercise.language,
            "statement": statement(exercise, self.agent_tests),
            "workspace": workspace,
            "solution_files": list(exercise.solution_files),
            "test_command": "",
            "test_script": "tests.py" if self.agent_tests else "",  # the runner makes the command of it
            "trajectory_file": TRAJECTORY_FILE,
            "returned": exercise.returned_pattern(),
        }
        files = {f"{workspace}/{p}": t.encode("utf-8") for p, t in exercise.files().items()}
        setup = {"language": exercise.language, "runner": self.found.runner, "suite": exercise.suite}
        setup["env"] = {"JAVA_TOOL_OPTIONS": JVM_OPTIONS}
        files.update(coding_job_files(problem))
        files.update({"tests.py": (HERE / "check.py").read_bytes(), "tests.json": json.dumps(setup).encode()})
        return files

    def command(self) -> Sequence[str]:
        return [self.python or sys.executable, "runner.py"]

    def check_job(self, instance: Instance, answer: bytes) -> SandboxJob | Grade:
        data = answer_of(answer)
        if data is None:
            return Grade(False, {}, NOT_AN_ANSWER)
        exercise = self.exercise(instance)
        problem = {
            "instance_id": instance.id,
            "language": exercise.language,
            "name": exercise.name,
            "files": exercise.graded_files(data["files"]),
            "runner": self.found.runner,
            "suite": exercise.suite,
            "timeout": TEST_SECONDS,
            "env": {"JAVA_TOOL_OPTIONS": JVM_OPTIONS},
        }
        return signed_check_job(HERE / "check.py", problem, CHECK_LIMITS, self.python, self.hidden_paths())

    def grade(self, instance: Instance, answer: bytes, check: CheckRun | None = None) -> Grade:
        data = answer_of(answer)
        if data is None:
            return Grade(False, {}, NOT_AN_ANSWER)
        exercise = self.exercise(instance)
        accepted = exercise.accepted(data["files"])
        original = exercise.files()
        metrics = {
            "tests_passed": 0,
            "tests_total": 0,
            "resolved": 0,
            "files_changed": sum(1 for p, t in accepted.items() if original.get(p) != t),
            "agent_error": str(data.get("error") or "")[:1000],
        }
        if check is None:  # grading always runs the tests; without them nothing passed
            return Grade(True, metrics, "not checked")
        passed, total, resolved, line = verdict(instance.id, check)
        metrics.update(tests_passed=passed, tests_total=total, resolved=int(resolved))
        if metrics["files_changed"] == 0:
            line += "; the agent changed no solution file"
        return Grade(True, metrics, line)

    def score(self, instance: Instance, metrics: Mapping, reference: Mapping | None) -> float:
        return float(metrics.get("resolved", 0))

    def raw_value(self, metrics: Sequence[Mapping]) -> float | None:
        values = [m["resolved"] for m in metrics if "resolved" in m]
        return 100.0 * sum(values) / len(values) if values else None

    def trajectory(self, answer: bytes) -> list[dict]:
        return read_trajectory(answer)


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def statement(exercise: Exercise, agent_tests: bool) -> str:
    """What the agent reads: the instructions, the files to edit, the tests and whether it may run them."""
    language = LANGUAGE_NAMES[exercise.language]
    tests = ", ".join(exercise.test_files)
    run = "The test command runs them as grading does." if agent_tests else "You cannot run the tests."
    return (
        f"# {exercise.name} ({language})\n\n{exercise.instructions()}\n"
        f"## Your task\n\nEdit {', '.join(exercise.solution_files)} in the workspace so that the exercise's "
        f"tests ({tests}) pass. Use only the standard library of {language} and what the exercise's build "
        f"files already name. Do not change the tests: grading runs the original ones. {run}\n"
    )


def verdict(instance_id: str, check: CheckRun) -> tuple[int, int, bool, str]:
    """(passed, total, resolved, one line) from the check job: only a verdict signed with the job's key counts."""
    result = check.result
    if result.answer is None:
        return 0, 0, False, f"the tests did not finish: {result.reason or result.status}"
    try:
        data = json.loads(result.answer)
        passed, total, passed_all, mac = int(data["passed"]), int(data["total"]), bool(data["passed_all"]), data["mac"]
        output = str(data.get("output", ""))
    except (ValueError, UnicodeDecodeError, KeyError, TypeError):
        return 0, 0, False, "the tests left no readable verdict"
    if not signed_by_the_job(check, f"{instance_id}|{passed}|{total}|{int(passed_all)}", str(mac)):
        return 0, 0, False, "the tests' verdict was not written by the checker (ignored)"
    line = f"{passed}/{total} tests pass" + ("" if passed_all else "; not resolved")
    if not passed_all:
        failure = _first_failure(output)
        line += f": {failure}" if failure else ""
    return passed, total, passed_all, re.sub(r"\s+", " ", line).strip()[:500]


def _first_failure(output: str) -> str:
    """The first line of the output that reads as an error or a failure."""
    for line in output.splitlines():
        if re.search(r"error|fail|panic|expected", line, re.I) and not re.search(r"\b0 failed\b", line):
            return line.strip()[:300]
    return ""
