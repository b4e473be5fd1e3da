"""The live page's one write: a person's answer to the human mutator's pending question.

A run with `--mutator human` leaves the question it waits on in its folder (`human/pending.json`,
engine/mutators/human_desk.py); the page shows it (GET) and posts the answer (POST), which is written to
`human/answer-<key>.txt` for the search to pick up. Nothing else on the page writes, and this writes no
archive: the search books the answer itself.

What a POST must carry, besides the token every request needs (engine/live/auth.py):
- the header `X-Clade-Answer: 1`: a cross-site form cannot send a custom header, and a cross-site script
  could only after a CORS preflight this server never approves (CSRF);
- when the browser sends `Origin`, it must be this server's own;
- a JSON body {"key": ..., "answer": ...} of at most MAX_BODY_BYTES, whose key is the pending question's
  (an answer to a question no longer asked is refused, 409).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine.mutators.human_desk import MAX_ANSWER_CHARS, read_pending, write_answer

ANSWER_HEADER = "x-clade-answer"
MAX_BODY_BYTES = 4 * MAX_ANSWER_CHARS + 4096  # the answer's characters, as UTF-8 at worst, and the JSON around


def pending_view(folder: Path) -> dict[str, Any]:
    """{"pending": the question (key, parent, purpose, messages, asked_at) or None}."""
    pending = read_pending(folder)
    if pending is None:
        return {"pending": None}
    shown = {k: pending.get(k) for k in ("key", "parent", "purpose", "messages", "asked_at")}
    return {"pending": shown}


def same_origin(origin: str | None, host: str | None, scheme: str) -> bool:
    """True when the browser sent no Origin, or the page's own (scheme://host[:port])."""
    if origin is None:
        return True
    return host is not None and origin.rstrip("/") == f"{scheme}://{host}"


def take_answer(folder: Path, body: bytes) -> tuple[int, str]:
    """(HTTP status, message) for a posted answer; 200 once written where the search picks it up."""
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return 400, 'the body must be JSON: {"key": ..., "answer": ...}'
    if not isinstance(data, dict) or not isinstance(data.get("key"), str) or not isinstance(data.get("answer"), str):
        return 400, 'the body must be JSON: {"key": ..., "answer": ...}'
    answer = data["answer"]
    if not answer.strip():
        return 400, "the answer is empty"
    if len(answer) > MAX_ANSWER_CHARS:
        return 413, f"the answer is over {MAX_ANSWER_CHARS} characters"
    pending = read_pending(folder)
    if pending is None or pending["key"] != data["key"]:
        return 409, "no question with this key waits (answered already, or the run has moved on)"
    write_answer(folder, data["key"], answer)
    return 200, "answer given: the search picks it up in a moment"
