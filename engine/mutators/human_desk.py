"""Where a question to the person at the keyboard waits, and where the answer comes from.

OpenEvolve's manual mode (scripts/manual.py, with its visualizer) lets a person answer in place of the
LLM; here the question is the LLM mutator's own prompt (engine/mutators/prompt.py) and the answer takes the
formats a model's does (engine/mutators/answers.py). Two places may answer, whichever comes first:

- the terminal: the person pastes the answer and ends it with a line holding only `.` (or end of input,
  Ctrl-D); a first line `@PATH` answers with that file's text instead;
- the run folder: while a question waits, `human/pending.json` holds it (key, parent, messages), and the
  live page (`runs serve`, engine/live) writes the answer to `human/answer-<key>.txt`.

The pending file stays when the run is interrupted while it waits, so a resumed run knows which expansion
to ask again (engine/mutators/human.py). stdin is read on one daemon thread for the whole run: a thread
blocked on a terminal read can be neither interrupted nor joined, and must not hold the process at exit.
"""

from __future__ import annotations

import asyncio
import json
import queue
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from engine.whole_file import write_text_whole

HUMAN_DIR = "human"
PENDING_FILE = "pending.json"
END_LINE = "."
MAX_ANSWER_CHARS = 256_000  # an answer longer than this is refused (the page's limit too)
POLL_S = 0.2  # how often the folder and the terminal are looked at while a question waits


@dataclass(frozen=True)
class Question:
    """One call the person answers in place of a model: its key names the expansion and the attempt."""

    key: str  # e.g. "parent 3 child 0 attempt 0"
    parent: int | None  # None: a question about the run, not one parent
    purpose: str  # "mutate", "retry" (an answer sent back), "diagnose"
    messages: list[dict]


def human_dir(run_folder: Path) -> Path:
    return Path(run_folder) / HUMAN_DIR


def answer_file(run_folder: Path, key: str) -> Path:
    """Where the live page leaves the answer to the call `key`: human/answer-parent-3-child-0-attempt-0.txt."""
    slug = re.sub(r"[^A-Za-z0-9]+", "-", key).strip("-")
    return human_dir(run_folder) / f"answer-{slug}.txt"


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_whole(path, text)  # a reader sees the whole file or none


def read_pending(run_folder: Path) -> dict[str, Any] | None:
    """The question waiting in `run_folder` ({key, parent, purpose, messages, asked_at}), or None."""
    try:
        found = json.loads((human_dir(run_folder) / PENDING_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) and isinstance(found.get("key"), str) else None


def write_answer(run_folder: Path, key: str, text: str) -> Path:
    """Leave `text` as the answer to the pending call `key` (the live page's write)."""
    path = answer_file(run_folder, key)
    _write_atomically(path, text)
    return path


def expansion_of(call_key: str) -> str:
    """'parent 3 child 0 attempt 1' -> 'parent 3 child 0' (the expansion a call belongs to)."""
    found = re.match(r"parent \d+ child \d+", call_key)
    return found.group(0) if found else call_key


class TerminalLines:
    """Lines of a stream (stdin), read on one daemon thread and handed over without blocking; None at EOF."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._thread: threading.Thread | None = None

    def _read(self) -> None:
        try:
            for line in iter(self._stream.readline, ""):
                self._lines.put(line)
        except (OSError, ValueError):  # closed under us
            pass
        self._lines.put(None)

    def take(self) -> list[str | None]:
        """The lines read since the last call (None once the stream has ended), starting the reader first."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._read, name="human-answer-stdin", daemon=True)
            self._thread.start()
        taken = []
        while True:
            try:
                taken.append(self._lines.get_nowait())
            except queue.Empty:
                return taken


class Desk:
    """Asks the person one question at a time: shows it, waits for the terminal or the run folder."""

    def __init__(self, run_folder: Path, show: Callable[[str], None], lines: TerminalLines) -> None:
        self.run_folder = Path(run_folder)
        self.show = show
        self.lines = lines
        self._terminal_open = True
        self._unread: deque[str | None] = deque()

    def _pending(self, question: Question) -> None:
        record = {
            "key": question.key,
            "parent": question.parent,
            "purpose": question.purpose,
            "messages": question.messages,
            "asked_at": time.time(),
            "answer_file": answer_file(self.run_folder, question.key).name,
        }
        _write_atomically(human_dir(self.run_folder) / PENDING_FILE, json.dumps(record, indent=1))

    def _done(self, question: Question) -> None:
        for path in (human_dir(self.run_folder) / PENDING_FILE, answer_file(self.run_folder, question.key)):
            path.unlink(missing_ok=True)

    async def ask(self, question: Question) -> str:
        """The person's answer to `question` (not empty). Cancelled (Ctrl-C, a time limit), the pending file
        stays for a resumed run to ask the same expansion again."""
        self._pending(question)
        self.show(render_question(question, answer_file(self.run_folder, question.key)))
        typed: list[str] = []
        from_page = answer_file(self.run_folder, question.key)
        while True:
            if from_page.exists():
                text = from_page.read_text(encoding="utf-8", errors="replace")
                if text.strip():
                    self._done(question)
                    self.show(f"(answered on the live page: {len(text)} characters)")
                    return text
                from_page.unlink(missing_ok=True)
            if self._terminal_open:
                typed_answer = self._typed(typed)
                if typed_answer is not None:
                    self._done(question)
                    return typed_answer
            await asyncio.sleep(POLL_S)

    def _typed(self, typed: list[str]) -> str | None:
        """An answer the terminal has finished (a line `.` or the end of input), else None (lines kept)."""
        self._unread.extend(self.lines.take())
        while self._unread:
            line = self._unread.popleft()  # lines after this answer's end stay for the next question
            ended = line is None
            if line is None:
                self._terminal_open = False
            elif line.rstrip("\r\n") != END_LINE:
                typed.append(line)
                continue
            text = self._answer_from(typed) if typed or not ended else None
            typed.clear()
            if text is not None:
                return text
            if ended:
                self.show("(the terminal's input has ended: answer on the live page, `runs serve`)")
                return None
        return None

    def _answer_from(self, typed: list[str]) -> str | None:
        """What a finished terminal answer says: the lines, or the file a first line `@PATH` names."""
        text = "".join(typed)
        first = text.strip().splitlines()[0] if text.strip() else ""
        if first.startswith("@") and len(text.strip().splitlines()) == 1:
            path = Path(first[1:].strip()).expanduser()
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                self.show(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}; answer again")
                return None
        if not text.strip():
            self.show("(an empty answer: paste SEARCH/REPLACE blocks or the whole file, then a line with only '.')")
            return None
        if len(text) > MAX_ANSWER_CHARS:
            self.show(f"(an answer of {len(text)} characters is over the {MAX_ANSWER_CHARS} allowed; answer again)")
            return None
        return text


def render_question(question: Question, page_file: Path) -> str:
    """What the terminal shows: the prompt (only what came after the last answer, for a call that sends an
    answer back), then how to answer."""
    messages = question.messages
    answered = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
    shown = messages[answered[-1] + 1 :] if answered else messages
    rule = "=" * 78
    parts = [rule, f"The human mutator asks ({question.purpose}, {question.key}):"]
    for message in shown:
        parts += [f"--- {message.get('role', '?')} ---", str(message.get("content", ""))]
    parts += [
        rule,
        "Answer as a model would (SEARCH/REPLACE blocks, or the whole file, as asked above), then a line with "
        f"only '{END_LINE}' (or Ctrl-D). '@PATH' alone answers with a file. Or answer on the live page "
        f"(runs serve), which writes {page_file}. Ctrl-C stops the run; --resume asks this again.",
    ]
    return "\n".join(parts)
