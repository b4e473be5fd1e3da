"""RepoFix as a Clade task: the agent is a coding scaffold that fixes one bug in a tiny repository.

Data: 40 hand-written instances in instances/<id>/ (rf01-rf20 dev, rf21-rf40
holdout) and a trivial `smoke` one in neither split. Each holds statement.md
(the issue), repo/ (the buggy code and its visible unittest tests),
solution/ (the fixed files) and hidden.json (the hidden tests, as data:
code that leaves `result`, and the value or exception class it must give).
`--instances FILE` picks a subset (tasks/packaged.py's format).

An evaluation has three steps:
1. in the sandbox, the runner calls the agent's `solve(problem)` with the
   issue and the repository in repo/ (which it edits in place); whatever the
   agent does, the runner then writes answer.json: every text file of repo/,
   what solve returned or raised, and the agent's trajectory;
2. in a fresh sandbox job of the same backend, `check.py` runs the hidden
   cases on the candidate repository (the original files overwritten by the
   answer's .py files outside tests/: editing the tests gains nothing), the
   code in a child process, the comparison in the checker, the verdict
   signed with a key the code never sees;
3. here, the signature is checked: the score is the share of hidden cases
   passed, `resolved` is 1 when they all pass.

The instances folder (hidden tests and solutions) is hidden from every
sandbox under bwrap; the process sandbox cannot hide it.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path

from engine.errors import UserError
from engine.sandbox.base import SandboxJob, SandboxLimits
from tasks.base import CheckedTask, CheckRun, Grade, Instance
from tasks.packaged import choose, read_subset
from tasks.signed_check import signed_by_the_job, signed_check_job

HERE = Path(__file__).resolve().parent
INSTANCES = HERE / "instances"
SEEDS = HERE.parents[1] / "agents_seed"
SEED_AGENT = SEEDS / "coding_agent"
CHECK_LIMITS = SandboxLimits(timeout_s=30.0, cpu_s=20, memory_mb=1024, file_size_mb=16, processes=32)
WORKSPACE = "repo"
TEST_COMMAND = "python -m unittest discover -s tests -q"
TRAJECTORY_FILE = "trajectory.jsonl"

DESCRIPTION = """\
RepoFix: fix the one bug an issue describes in a tiny Python repository
(2-4 files, standard library only). The runner calls `solve(problem)` once
per instance; `problem` is a dict with "instance_id", "statement" (the issue
as a user filed it: the symptom, an example call, the wrong and the expected
result), "workspace" ("repo", the folder holding the repository; edit its
files in place), "test_command" (the command that runs the visible tests,
from the workspace: "python -m unittest discover -s tests -q"; they may not
reproduce the bug) and "trajectory_file" (a JSON-lines file where the agent
may log its steps, one object per line, shown in reports). `solve` may return
a short summary as a str. Afterwards hidden tests run on the repository's
.py files (its tests/ folder always as shipped: editing tests gains
nothing); the score is the share of hidden tests that pass, and an instance
is resolved when they all pass. The agent may call a language model:
`import clade_llm` (a file beside the agent) and
`clade_llm.chat(messages, temperature=..., max_tokens=...)` returns the
answer's text (messages as in the OpenAI API, or one string). Calls are
limited per instance in tokens; there is no network and no API key in the
sandbox, only this gateway; subprocesses (e.g. running the tests) are allowed."""


NOT_AN_ANSWER = 'answer.json must be {"files": {path: text}, ...}'


def coding_job_files(problem: Mapping) -> dict[str, bytes]:
    """What a coding agent's job holds beside its workspace (RepoFix's and Polyglot's): the runner, the gateway's
    client and the problem."""
    return {
        "runner.py": (HERE / "runner.py").read_bytes(),
        "clade_llm.py": (SEEDS / "clade_llm.py").read_bytes(),
        "problem.json": json.dumps(problem).encode(),
    }


def coding_agent_files(task: str, entry_file: str) -> dict[str, str]:
    """Every text file of agents_seed/coding_agent/ (RepoFix's and Polyglot's seed), read now."""
    if not SEED_AGENT.is_dir():
        raise UserError(f"the {task} task's seed agent is missing: no folder {SEED_AGENT}")
    files = {}
    for path in sorted(SEED_AGENT.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            try:
                files[path.relative_to(SEED_AGENT).as_posix()] = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
    if entry_file not in files:
        raise UserError(f"the {task} task's seed agent has no {entry_file} in {SEED_AGENT}")
    return files


def read_trajectory(answer: bytes) -> list[dict]:
    """The steps the agent logged (answer.json's "trajectory"); [] when unreadable."""
    try:
        data = json.loads(answer)
    except (ValueError, UnicodeDecodeError):
        return []
    steps = data.get("trajectory") if isinstance(data, dict) else None
    return [s for s in steps if isinstance(s, dict)] if isinstance(steps, list) else []


def _is_test(path: str) -> bool:
    return path == "tests" or path.startswith("tests/")


def _safe(path: str) -> bool:
    parts = path.split("/")
    return bool(path) and not path.startswith("/") and "\\" not in path and all(p not in ("", ".", "..") for p in parts)


def _read_tree(root: Path) -> dict[str, str]:
    """{relative path: text} of every file under root, caches left out."""
    if not root.is_dir():
        return {}
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }


def load_instance(folder: Path, split: str) -> Instance:
    """An instance from its folder (statement.md, repo/, solution/, hidden.json)."""
    hidden = json.loads((folder / "hidden.json").read_text(encoding="utf-8"))
    return Instance(
        folder.name,
        split,
        {
            "statement": (folder / "statement.md").read_text(encoding="utf-8"),
            "repo": _read_tree(folder / "repo"),
            "hidden": list(hidden["cases"]),
            "solution": _read_tree(folder / "solution"),
        },
    )


def answer_of(answer: bytes) -> dict | None:
    """answer.json as a dict whose "files" map paths to texts; None when it is not that."""
    try:
        data = json.loads(answer)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        return None
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in data["files"].items()):
        return None
    return data


def candidate_files(original: Mapping[str, str], answer_files: Mapping[str, str]) -> dict[str, str]:
    """The repository the hidden tests see: the original, overwritten by the answer's .py files outside tests/."""
    files = dict(original)
    files.update({p: t for p, t in answer_files.items() if p.endswith(".py") and not _is_test(p) and _safe(p)})
    return files


class RepoFixTask(CheckedTask):
    name = "repofix"
    description = DESCRIPTION
    entry_file = "agent.py"
    entry_function = "solve"
    entry_args = ("problem",)
    answer_file = "answer.json"
    raw_metric = "resolved %"
    raw_metric_note = (
        "resolved % = instances whose hidden tests all pass after the agent's fix, in percent; higher is better"
    )
    limits = SandboxLimits(timeout_s=300.0, cpu_s=120, memory_mb=1024, file_size_mb=16, processes=64)
    agent_llm = "required"  # the agent calls a model: the run needs --agent-model or --model
    agent_max_tokens = 60_000  # per evaluation (one instance), in + out

    def __init__(self, instances_path: str | None = None, root: Path = INSTANCES) -> None:
        self.instances_path = instances_path
        self.root = Path(root)

    @cached_property
    def all_instances(self) -> dict[str, Instance]:
        """Every instance of both splits, in id order (rf01-rf20 dev, rf21-rf40 holdout)."""
        ids = sorted(p.name for p in self.root.iterdir() if p.is_dir() and re.fullmatch(r"rf\d+", p.name))
        return {i: load_instance(self.root / i, "dev" if int(i[2:]) <= 20 else "holdout") for i in ids}

    # ----- the Task protocol ---------------------------------------------------
    def seed_files(self) -> dict[str, str]:
        return coding_agent_files(self.name, self.entry_file)

    def reference_agents(self) -> dict[str, dict[str, str]]:
        return {}

    def hidden_paths(self) -> tuple[str, ...]:
        return (str(self.root),)

    def instances(self) -> list[Instance]:
        pool = self.all_instances
        pools = {split: [i for i, inst in pool.items() if inst.split == split] for split in ("dev", "holdout")}
        chosen = choose(pools, {"dev": None, "holdout": None}, read_subset(self.instances_path, self.name), self.name)
        return [pool[i] for split in ("dev", "holdout") for i in chosen.get(split, [])]

    def smoke_instance(self) -> Instance:
        """A trivial instance (in neither split) to check that a freshly edited agent still works."""
        return load_instance(self.root / "smoke", "dev")

    def sandbox_files(self, instance: Instance) -> dict[str, bytes]:
        problem = {
            "instance_id": instance.id,
            "statement": instance.data["statement"],
            "workspace": WORKSPACE,
            "test_command": TEST_COMMAND,
            "trajectory_file": TRAJECTORY_FILE,
        }  # never the hidden tests
        files = {f"{WORKSPACE}/{path}": text.encode("utf-8") for path, text in instance.data["repo"].items()}
        files.update(coding_job_files(problem))
        return files

    def command(self) -> Sequence[str]:
        return [self.python or sys.executable, "runner.py"]

    def check_job(self, instance: Instance, answer: bytes) -> SandboxJob | Grade:
        """The hidden tests of `instance` on the answer's repository, as a fresh sandbox job (or why it cannot run)."""
        data = answer_of(answer)
        if data is None:
            return Grade(False, {}, NOT_AN_ANSWER)
        problem = {
            "instance_id": instance.id,
            "files": candidate_files(instance.data["repo"], data["files"]),
            "cases": instance.data["hidden"],
        }
        return signed_check_job(HERE / "check.py", problem, CHECK_LIMITS, self.python, self.hidden_paths())

    def grade(self, instance: Instance, answer: bytes, check: CheckRun | None = None) -> Grade:
        data = answer_of(answer)
        if data is None:
            return Grade(False, {}, NOT_AN_ANSWER)
        metrics = {
            "hidden_passed": 0,
            "hidden_total": len(instance.data["hidden"]),
            "resolved": 0,
            **edits(instance.data["repo"], data["files"]),
            "agent_error": str(data.get("error") or "")[:1000],
        }
        if check is None:  # grading always runs the hidden tests; without them nothing passed
            return Grade(True, metrics, "not checked")
        passed, total, line = verdict(instance.id, len(instance.data["hidden"]), check)
        metrics.update(hidden_passed=passed, hidden_total=total, resolved=int(total > 0 and passed == total))
        if metrics["files_changed"] == 0:
            line += "; the agent changed no file"
        if metrics["tests_edited"]:
            line += "; the agent edited the tests (ignored)"
        return Grade(True, metrics, line)

    def score(self, instance: Instance, metrics: Mapping, reference: Mapping | None) -> float:
        total = metrics.get("hidden_total", 0)
        return metrics.get("hidden_passed", 0) / total if total else 0.0

    def raw_value(self, metrics: Sequence[Mapping]) -> float | None:
        values = [m["resolved"] for m in metrics if "resolved" in m]
        return 100.0 * sum(values) / len(values) if values else None

    def trajectory(self, answer: bytes) -> list[dict]:
        return read_trajectory(answer)


def edits(original: Mapping[str, str], answer_files: Mapping[str, str]) -> dict[str, int]:
    """files_changed: .py files outside tests/ added or changed; tests_edited: a test file changed or deleted."""
    changed = sum(1 for p, t in answer_files.items() if p.endswith(".py") and not _is_test(p) and original.get(p) != t)
    tests = any(answer_files.get(p) != t for p, t in original.items() if _is_test(p))
    return {"files_changed": changed, "tests_edited": int(tests)}


def verdict(instance_id: str, expected_total: int, check: CheckRun) -> tuple[int, int, str]:
    """(passed, total, one line) from the check job: only a verdict signed with the job's key counts."""
    result = check.result
    if result.answer is None:
        return 0, expected_total, f"the hidden tests did not finish: {result.reason or result.status}"
    try:
        data = json.loads(result.answer)
        passed, total, mac = int(data["passed"]), int(data["total"]), str(data["mac"])
        rows = [(str(r[0]), bool(r[1]), str(r[2])) for r in data.get("results", [])]
    except (ValueError, UnicodeDecodeError, KeyError, TypeError, IndexError):
        return 0, expected_total, "the hidden tests left no readable verdict"
    signed = signed_by_the_job(check, f"{instance_id}|{passed}|{total}", mac)
    if not signed or total != expected_total or not 0 <= passed <= total:
        return 0, expected_total, "the hidden tests' verdict was not written by the checker (ignored)"
    line = f"{passed}/{total} hidden tests pass"
    failure = next(((name, detail) for name, ok, detail in rows if not ok), None)
    if failure is not None and passed < total:
        line += f"; first failure: {failure[0]}: {failure[1]}"
    return passed, total, re.sub(r"\s+", " ", line).strip()[:500]
