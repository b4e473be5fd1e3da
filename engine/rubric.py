"""`python -m engine.rubric generate FOLDER --model M [--api-base URL] [--force]`: draft a rubric task's checks.

For each question of FOLDER/questions.json that has `test_cases` (reference
facts), the model turns them into boolean fact checks with weights, and
FOLDER/rubric_checks.json is written for review (tasks/adapters/rubric.py
reads it). An existing rubric_checks.json is kept unless --force is given.
The calls go through engine.llm's LLMClient (purpose 'rubric') on a
throw-away archive, so they are retried and priced like a run's. Bad input
ends in one line and exit code 2.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

EXIT_USER_ERROR = 2
TRIES = 3

SYSTEM = (
    "You write grading rubrics. Turn the reference facts of a customer-support question into boolean fact "
    "checks a grader can verify in an answer, each phrased as 'the answer says ...', one fact per check, "
    "with a weight from 1 (detail) to 3 (essential). "
    'Reply with JSON only: {"checks": [{"check": "the answer says ...", "weight": 2}, ...]}.'
)


class OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USER_ERROR, f"error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="python -m engine.rubric", description="Rubric task folders: draft their fact checks.")
    sub = p.add_subparsers(dest="command", required=True, metavar="{generate}", parser_class=OneLineParser)
    gen = sub.add_parser(
        "generate", help="write FOLDER/rubric_checks.json from the questions' test_cases, with a model, for review"
    )
    gen.add_argument("folder")
    gen.add_argument("--model", required=True, help="the model that writes the checks (any litellm model)")
    gen.add_argument("--api-base", help="an OpenAI-compatible server for the model")
    gen.add_argument("--force", action="store_true", help="overwrite an existing rubric_checks.json")
    return p


def prompt(question: dict) -> list[dict]:
    facts = "\n".join(f"- {fact}" for fact in question["test_cases"])
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"Question:\n{question['question']}\n\nReference facts:\n{facts}"},
    ]


def read_checks(text: str) -> list[dict] | str:
    """The model's checks, or why they cannot be read."""
    from tasks.adapters.rubric import answer_json

    data = answer_json(text)
    if isinstance(data, str):
        return data
    items = data.get("checks") if isinstance(data, dict) else None
    if not isinstance(items, list) or not items:
        return 'the JSON has no non-empty list "checks"'
    out = []
    for item in items:
        check = item.get("check") if isinstance(item, dict) else None
        weight = item.get("weight", 1) if isinstance(item, dict) else None
        if not isinstance(check, str) or not check.strip():
            return 'each check needs the text "check"'
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not weight > 0:
            return f"weight {weight!r} is not a positive number"
        out.append({"check": check.strip(), "weight": weight})
    return out


async def _draft(client, model: str, questions: list[dict]) -> dict[str, list[dict]]:
    checks: dict[str, list[dict]] = {}
    for question in questions:
        messages = prompt(question)
        why = ""
        for attempt in range(TRIES):
            reply = await client.complete(
                messages,
                model=model,
                purpose="rubric",
                node_id=None,
                key=f"rubric {question['id']}" + (f" retry {attempt}" if attempt else ""),
                temperature=0.0,
            )
            found = read_checks(reply.text)
            if not isinstance(found, str):
                checks[question["id"]] = found
                break
            why = found
            messages = [
                *messages,
                {"role": "assistant", "content": reply.text},
                {
                    "role": "user",
                    "content": f"Your answer could not be read: {why}. Reply with only the "
                    'JSON object {"checks": [{"check": ..., "weight": ...}]}.',
                },
            ]
        else:
            raise ValueError(
                f"the model's checks for question {question['id']!r} could not be read after {TRIES} tries: {why}"
            )
    return checks


def generate(
    folder: str | Path, model: str, llm_mock=None, *, api_base: str | None = None, force: bool = False
) -> Path:
    """Write FOLDER/rubric_checks.json from the questions' test_cases; its path. ValueError (one line) on bad input.
    `llm_mock`: as LLMClient's `mock` (litellm's mock_response path), for tests."""
    from archive.store import Archive
    from engine.llm import LLMClient, LLMSettings
    from tasks.adapters.rubric import read_questions

    root = Path(folder)
    if not root.is_dir():
        raise ValueError(f"{folder}: not a folder")
    out = root / "rubric_checks.json"
    if out.exists() and not force:
        raise ValueError(f"{out} exists; not overwritten (review it, or give --force to write a new one)")
    questions = [
        q for q in read_questions(root / "questions.json") if isinstance(q.get("test_cases"), list) and q["test_cases"]
    ]
    if not questions:
        raise ValueError(f"{root / 'questions.json'}: no question has test_cases to write checks from")
    api_key = None
    if api_base and llm_mock is None:
        from engine.llm.preflight import placeholder_key

        api_key = placeholder_key([model], api_base)
    with tempfile.TemporaryDirectory(prefix="clade-rubric-") as scratch:
        archive = Archive.create(Path(scratch) / "rubric.duckdb", "rubric", {}, seed=0)
        try:
            client = LLMClient(archive, LLMSettings(api_base=api_base, api_key=api_key), mock=llm_mock)
            checks = asyncio.run(_draft(client, model, questions))
        finally:
            archive.close()
    out.write_text(json.dumps({"checks": checks}, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from engine.llm import LLMError

    try:
        path = generate(args.folder, args.model, api_base=args.api_base, force=args.force)
    except (ValueError, LLMError, OSError) as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return EXIT_USER_ERROR
    print(f"wrote {path}: review the checks and their weights before a run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
