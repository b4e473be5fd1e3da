"""The rubric task folder: open-ended questions, answers graded by a judge model against fact checks.

Files: `agent.py`, the seed agent, with `answer(question: str) -> str` (it may
`import clade_llm` to call a model through the run's gateway, or be plain
code); `benchmark.py`, run in the sandbox as `python benchmark.py
questions.json`: it reads the questions, imports the agent, calls it per
question and prints one line `answers: {json}` (question id -> answer text;
anything else printed is ignored); `questions.json`, `{"questions": [{"id",
"question", "split": "dev" | "holdout", "test_cases": [reference facts,
optional]}]}`; `rubric_checks.json`, `{"checks": {question id: [{"check":
"the answer says refunds take 5-7 business days", "weight": 2}, ...]}}`
(`python -m engine.rubric generate FOLDER --model M` drafts it from the test
cases, for review). An optional `README.md` is the task's description.

Each question is one instance, in its split. The sandbox gets benchmark.py
and a questions.json holding that one question (id and text): never the
checks, the test cases or the other questions; both JSON files are also
hidden at their host paths (bwrap and docker honour it, process cannot).
Clade's runner writes the answer to answer.json.

Grading happens OUTSIDE the sandbox: `judge_grade` asks the judge model
(`--judge-model`, attached by the engine with `attach_judge`) one call per
evaluation for one boolean per check, as JSON `{"checks": [true, false,
...]}` in the order given. The request holds only the question, the answer
and the checks (no node, no time), so an identical judgement is answered
from the archive at no cost. A judge answer that cannot be read is asked
again, twice at most, with the error in the conversation; after three the
answer is `bad_output`. The score is the weighted share of checks passed.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from tasks.adapters.folder import FolderTask, read_text, short
from tasks.base import Grade, Instance, JudgedTask

SEED_CLIENT = Path(__file__).resolve().parents[2] / "agents_seed" / "clade_llm.py"
JUDGE_TRIES = 3
MAX_ANSWER_CHARS = 8000  # of an answer the judge reads; the rest is cut (deterministically)
SPLITS = ("dev", "holdout")

JUDGE_SYSTEM = (
    "You grade an answer to a customer's question against a list of fact checks. For each check, decide "
    "whether the answer satisfies it: true only when the answer states it (or something that means the same) "
    "and does not contradict it; false when the answer omits it, contradicts it or is vague about it. "
    'Reply with JSON only: {"checks": [true, false, ...]}, one boolean per check, in the order given.'
)


def judge_messages(question: str, answer: str, checks: Sequence[str]) -> list[dict]:
    """The judge's conversation for one answer: the same inputs always give the same request."""
    if len(answer) > MAX_ANSWER_CHARS:
        answer = answer[:MAX_ANSWER_CHARS] + "\n[... the rest of the answer is cut]"
    listed = "\n".join(f"{k}. {text}" for k, text in enumerate(checks, 1))
    user = (
        f"Question:\n{question}\n\nAnswer:\n{answer}\n\nChecks ({len(checks)}):\n{listed}\n\n"
        f'Reply with {{"checks": [...]}} holding exactly {len(checks)} booleans.'
    )
    return [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": user}]


def answer_json(text: str) -> object | str:
    """The JSON object in a model's answer (fenced or bare), or why there is none (one line)."""
    body = text.strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", body, re.DOTALL)
    if fenced:
        body = fenced.group(1).strip()
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end < start:
        return "no JSON object in the answer"
    try:
        return json.loads(body[start : end + 1])
    except ValueError as exc:
        return f"not JSON ({short(exc, 120)})"


def read_verdicts(text: str, n: int) -> list[bool] | str:
    """The judge's booleans, or why its answer cannot be read."""
    data = answer_json(text)
    if isinstance(data, str):
        return data
    if not isinstance(data, dict) or not isinstance(data.get("checks"), list):
        return 'the JSON has no list "checks"'
    verdicts = data["checks"]
    if len(verdicts) != n:
        return f'"checks" holds {len(verdicts)} values, not {n}'
    if not all(isinstance(v, bool) for v in verdicts):
        return '"checks" must hold only true or false'
    return verdicts


def read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{path}: missing") from None
    except ValueError as exc:
        raise ValueError(f"{path}: not JSON ({short(exc, 120)})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: must hold a JSON object")
    return data


def read_questions(path: Path) -> list[dict]:
    """questions.json's questions, checked: unique string ids, text, a split."""
    questions = read_json(path).get("questions")
    if not isinstance(questions, list) or not questions:
        raise ValueError(f'{path}: "questions" must be a non-empty list')
    seen: set[str] = set()
    for k, q in enumerate(questions):
        if not isinstance(q, dict) or not isinstance(q.get("id"), str) or not q["id"].strip():
            raise ValueError(f'{path}: question {k} needs a non-empty string "id"')
        if q["id"] in seen:
            raise ValueError(f"{path}: question id {q['id']!r} appears twice")
        seen.add(q["id"])
        if not isinstance(q.get("question"), str) or not q["question"].strip():
            raise ValueError(f'{path}: question {q["id"]!r} needs the text "question"')
        if q.get("split", "dev") not in SPLITS:
            raise ValueError(f"{path}: question {q['id']!r}: split must be dev or holdout")
    return questions


def read_checks(path: Path, ids: Sequence[str]) -> dict[str, list[dict]]:
    """rubric_checks.json's checks per question id, checked: every question has some, weights positive."""
    checks = read_json(path).get("checks")
    if not isinstance(checks, dict):
        raise ValueError(f'{path}: "checks" must be an object, question id -> list of checks')
    out: dict[str, list[dict]] = {}
    for qid in ids:
        items = checks.get(qid)
        if not isinstance(items, list) or not items:
            raise ValueError(f"{path}: question {qid!r} has no checks")
        out[qid] = []
        for item in items:
            text = item.get("check") if isinstance(item, dict) else None
            weight = item.get("weight", 1) if isinstance(item, dict) else None
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f'{path}: question {qid!r}: each check needs the text "check"')
            if (
                isinstance(weight, bool)
                or not isinstance(weight, (int, float))
                or not math.isfinite(weight)
                or weight <= 0
            ):
                raise ValueError(f"{path}: question {qid!r}: weight {weight!r} is not a positive number")
            out[qid].append({"check": text.strip(), "weight": float(weight)})
    unknown = sorted(set(checks) - set(ids))
    if unknown:
        raise ValueError(f"{path}: checks for unknown question ids: {', '.join(unknown[:5])}")
    return out


def rubric_score(verdicts: Sequence[bool], weights: Sequence[float]) -> float:
    """The weighted share of checks passed."""
    total = sum(weights)
    return sum(w for v, w in zip(verdicts, weights) if v) / total if total else 0.0


class RubricTask(FolderTask, JudgedTask):
    format = "rubric"
    runner = "rubric_runner.py"
    metric_name = "rubric"
    agent_llm = "optional"  # the agent may call a model through the gateway (clade_llm), or be plain code
    agent_max_tokens = 20_000  # per evaluation (one question), in + out

    def __init__(self, root, instances_path=None, target=None) -> None:
        if instances_path:
            raise ValueError(
                "--instances does not apply to a rubric task folder: questions.json holds the "
                "questions and their splits"
            )
        super().__init__(root, "agent.py", None, target)
        assert self._seed is not None  # a rubric folder is never seedless: FolderTask read its agent.py
        if not re.search(r"^(?:async\s+)?def\s+answer\s*\(", self._seed, re.MULTILINE):
            raise ValueError(f"{self.root / 'agent.py'}: no top-level function answer(question)")
        self.entry_function, self.entry_args = "answer", ("question",)
        self.questions = read_questions(self.root / "questions.json")
        self.checks = read_checks(self.root / "rubric_checks.json", [q["id"] for q in self.questions])
        if not any(q.get("split", "dev") == "dev" for q in self.questions):
            raise ValueError(f"{self.root / 'questions.json'}: no question in the dev split")
        self._files = {"benchmark.py": (self.root / "benchmark.py").read_bytes()}
        self._client = None
        self._judge_model: str | None = None
        readme = self.root / "README.md"
        self.description = (
            (read_text(readme) + "\n\n" if readme.is_file() else "")
            + f"{self.entry_file} defines answer(question: str) -> str, called once per "
            "question (a customer's question, as text); `python benchmark.py questions.json` "
            "calls it and prints the answers. A judge model grades each answer against "
            "fact checks the agent never sees; the score is the weighted share of checks "
            "passed. The agent may `import clade_llm` (a file beside it) to call a model when "
            "the run gives it one (clade_llm.available())."
        )

    # ----- what the engine reads --------------------------------------------------------------------------

    @property
    def raw_metric(self) -> str:
        return "rubric %"

    @property
    def raw_metric_note(self) -> str:
        return "rubric % = weighted share of fact checks the judge passed, mean over questions; higher is better"

    @property
    def score_note(self) -> str:
        return "the score is the weighted share of checks passed, in [0, 1]"

    def instances(self) -> list[Instance]:
        return [Instance(q["id"], q.get("split", "dev"), {"question": q["question"]}) for q in self.questions]

    def hidden_paths(self) -> tuple[str, ...]:
        """The checks and the reference facts, on the host: bwrap and docker hide them; process cannot."""
        return (str(self.root / "rubric_checks.json"), str(self.root / "questions.json"))

    def sandbox_files(self, instance: Instance) -> dict[str, bytes]:
        one = {"questions": [{"id": instance.id, "question": instance.data["question"]}]}  # never checks or facts
        return {
            **self._files,
            "questions.json": json.dumps(one, indent=1).encode(),
            "clade_llm.py": SEED_CLIENT.read_bytes(),
            f"clade_{self.runner}": (Path(__file__).resolve().parent / "runners" / self.runner).read_bytes(),
            "clade_task.json": json.dumps({"question_id": instance.id}).encode(),
        }

    def score(self, instance: Instance, metrics: Mapping, reference: Mapping | None) -> float:
        return float(metrics.get("metric", 0.0))

    def raw_value(self, metrics: Sequence[Mapping]) -> float | None:
        values = [float(m["metric"]) for m in metrics if "metric" in m]
        return 100.0 * sum(values) / len(values) if values else None

    # ----- grading ----------------------------------------------------------------------------------------

    def attach_judge(self, client, model: str) -> None:
        """The run's LLMClient and --judge-model: the engine calls this before the search."""
        self._client, self._judge_model = client, model

    def answer_text(self, answer: bytes) -> str | Grade:
        """The agent's answer from the runner's answer.json, or the invalid Grade saying why there is none."""
        data = self.answer_object(answer)
        if isinstance(data, str):
            return Grade(False, {}, data)
        if "error" in data:
            return Grade(False, {}, self.explain_missing(short(data["error"]), str(data.get("error_file") or "")))
        if not isinstance(data.get("answer"), str):
            return Grade(False, {}, "answer.json holds no answer text")
        return data["answer"]

    def grade(self, instance: Instance, answer: bytes) -> Grade:
        """Only the judge grades (the engine awaits `judge_grade`); here an unreadable answer is refused."""
        text = self.answer_text(answer)
        if isinstance(text, Grade):
            return text
        raise RuntimeError("a rubric task is graded by its judge: await task.judge_grade(instance, answer)")

    async def judge_grade(self, instance: Instance, answer: bytes) -> Grade:
        """One judgement (up to three calls when the judge's answer cannot be read) -> the Grade."""
        if self._client is None or self._judge_model is None:
            raise RuntimeError(
                f"the {self.name} task has no judge: call attach_judge(client, model) first "
                "(the engine does, with --judge-model)"
            )
        from engine.llm import BudgetExceeded, LLMError, LLMFatalError

        text = self.answer_text(answer)
        if isinstance(text, Grade):
            return text
        checks = self.checks[instance.id]
        texts = [c["check"] for c in checks]
        messages = judge_messages(instance.data["question"], text, texts)
        key = f"judge {instance.id} {hashlib.sha256(answer).hexdigest()[:16]}"
        why = ""
        for attempt in range(JUDGE_TRIES):
            try:
                reply = await self._client.complete(
                    messages,
                    model=self._judge_model,
                    purpose="judge",
                    node_id=None,
                    key=key + (f" retry {attempt}" if attempt else ""),
                    temperature=0.0,
                )
            except (BudgetExceeded, LLMFatalError):
                raise  # the run's budget, a bad key: not this answer's doing
            except LLMError as exc:
                return Grade(False, {}, f"the judge call failed: {short(exc)}")
            verdicts = read_verdicts(reply.text, len(checks))
            if not isinstance(verdicts, str):
                return self._graded(instance, checks, verdicts)
            why = verdicts
            messages = [
                *messages,
                {"role": "assistant", "content": reply.text},
                {
                    "role": "user",
                    "content": f"Your answer could not be read: {why}. Reply with only the "
                    f'JSON object {{"checks": [...]}} holding exactly {len(checks)} '
                    "booleans (true or false), in the order of the checks.",
                },
            ]
        return Grade(False, {}, f"the judge's answer could not be read after {JUDGE_TRIES} tries: {why}")

    def _graded(self, instance: Instance, checks: list[dict], verdicts: list[bool]) -> Grade:
        weights = [c["weight"] for c in checks]
        share = rubric_score(verdicts, weights)
        metrics = {
            "metric": share,
            "checks_passed": sum(verdicts),
            "checks_total": len(checks),
            "weight_passed": sum(w for v, w in zip(verdicts, weights) if v),
            "weight_total": sum(weights),
            "verdicts": list(verdicts),
        }
        summary = (
            f"{metrics['checks_passed']}/{len(checks)} checks passed "
            f"(weight {metrics['weight_passed']:g}/{metrics['weight_total']:g}, score {share:.3f})"
        )
        failed = [c["check"] for c, v in zip(checks, verdicts) if not v]
        if instance.split == "dev" and failed:  # holdout feedback says no more than the score
            summary += "; failed: " + "; ".join(failed)
        return Grade(True, metrics, summary)
