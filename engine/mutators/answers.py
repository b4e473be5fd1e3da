"""Read an LLM's answer: SEARCH/REPLACE blocks, whole files, or a JSON diagnosis. Pure text in, data out.

SEARCH/REPLACE blocks (the syntax of Aider and OpenEvolve), possibly several,
possibly inside ``` fences:

    path/to/file.py          optional; without it the entry file, or the previous
    <<<<<<< SEARCH           block's file when this block directly follows it
    old lines
    =======
    new lines
    >>>>>>> REPLACE

The file name may also be given in the fence's info string (```python agent.py).
A whole-file rewrite is a fenced code block, optionally preceded by a line
naming the file (or naming it in the info string); one unnamed block is the
entry file.

A malformed answer raises `AnswerFormatError` (a `MutationError`) with one line
saying what is wrong, fit to be sent back to the model.
"""

from __future__ import annotations

import json
import re
from typing import Any

from engine.mutators.base import MutationError
from engine.mutators.edits import EditBlock

ANSWER_FORMATS = ("diff", "rewrite")
DIAGNOSIS_KEYS = ("summary", "proposed_improvement", "implementation_plan")

_SEARCH = re.compile(r"^\s*<{5,9}\s*SEARCH\s*$")
_DIVIDER = re.compile(r"^\s*={5,9}\s*$")
_REPLACE = re.compile(r"^\s*>{5,9}\s*REPLACE\s*$")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*(.*?)\s*$")
_PATH = re.compile(r"^[\w\-./]+\.[A-Za-z0-9]+$")
_PATH_PREFIX = re.compile(r"^(?:#+\s*|[-*]\s+)?(?:(?:file|filename|path)\s*:\s*)?", re.IGNORECASE)
_CODE_LANGS = {"", "python", "py", "python3"}  # and, for a program in another language, that language's tags
_CHANGE_LINE = re.compile(r"^\W*change\W*:\s*(.+)$", re.IGNORECASE)


class AnswerFormatError(MutationError):
    """The answer is not in the format asked for; the message is one line."""


def _entry_tags(entry_file: str) -> tuple[str, ...]:
    """The fence tags a model may put on a whole program in the entry file's language (cpp, c++, rust, ...)."""
    from engine.lang.registry import language_of

    language = language_of(entry_file)
    return language.fences if language else ()


def parse_answer(text: str, answer_format: str, entry_file: str) -> list[EditBlock] | dict[str, str]:
    """SEARCH/REPLACE blocks ("diff") or {path: whole new text} ("rewrite"); `AnswerFormatError` if malformed."""
    if answer_format not in ANSWER_FORMATS:
        raise ValueError(f"answer_format must be one of {ANSWER_FORMATS}, not {answer_format!r}")
    if not text or not text.strip():
        raise AnswerFormatError("the answer is empty")
    lines = text.splitlines()
    if answer_format == "diff":
        return _parse_blocks(lines, entry_file)
    return _parse_rewrite(lines, entry_file)


def _parse_blocks(lines: list[str], entry_file: str) -> list[EditBlock]:
    blocks: list[EditBlock] = []
    state = "outside"
    path = entry_file
    search: list[str] = []
    replace: list[str] = []
    start = 0
    for number, line in enumerate(lines, 1):
        if state == "outside":
            if _SEARCH.match(line):
                path = _block_path(lines, number - 1, entry_file, blocks)
                state, search, replace, start = "search", [], [], number
            elif _REPLACE.match(line):
                raise AnswerFormatError(f"line {number}: '>>>>>>> REPLACE' without a '<<<<<<< SEARCH' before it")
        elif state == "search":
            if _DIVIDER.match(line):
                state = "replace"
            elif _SEARCH.match(line):
                raise AnswerFormatError(
                    f"line {number}: a second '<<<<<<< SEARCH' before the '=======' of the block opened at line {start}"
                )
            elif _REPLACE.match(line):
                raise AnswerFormatError(
                    f"line {number}: '>>>>>>> REPLACE' before any '=======' in the block opened at line {start}"
                )
            else:
                search.append(line)
        else:
            if _REPLACE.match(line):
                blocks.append(EditBlock(path, _join(search), _join(replace)))
                state = "outside"
            elif _SEARCH.match(line):
                raise AnswerFormatError(
                    f"line {number}: '<<<<<<< SEARCH' inside the block opened at line {start} "
                    f"(its '>>>>>>> REPLACE' is missing)"
                )
            elif _DIVIDER.match(line):
                raise AnswerFormatError(f"line {number}: a second '=======' in the block opened at line {start}")
            else:
                replace.append(line)
    if state != "outside":
        missing = "'======='" if state == "search" else "'>>>>>>> REPLACE'"
        raise AnswerFormatError(f"the block opened at line {start} has no {missing} (answer cut off?)")
    if not blocks:
        if any(_FENCE.match(line) for line in lines):
            raise AnswerFormatError(
                "no SEARCH/REPLACE block in the answer (a code block is not an edit; "
                "use <<<<<<< SEARCH / ======= / >>>>>>> REPLACE)"
            )
        raise AnswerFormatError("no SEARCH/REPLACE block in the answer")
    return blocks


def _join(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


def _block_path(lines: list[str], search_index: int, entry_file: str, blocks: list[EditBlock]) -> str:
    """The file a block edits: a path line (or fence info) just above it, else the previous block's or the entry's."""
    j = search_index - 1
    while j >= 0:
        line = lines[j]
        fence = _FENCE.match(line)
        if fence:
            named = _info_path(fence.group(2))
            if named:
                return named
        elif line.strip():
            break
        j -= 1
    if j < 0:
        return entry_file
    if _REPLACE.match(lines[j]):
        return blocks[-1].path if blocks else entry_file
    return _as_path(lines[j]) or entry_file


def _as_path(line: str) -> str | None:
    """The file path a line names (`agent.py`, **lib/x.py**, `# File: a.py:`), or None."""
    text = _PATH_PREFIX.sub("", line.strip()).strip().strip("*`'\"").rstrip(":").strip().strip("*`'\"")
    if not _PATH.match(text):
        return None
    text = text.removeprefix("./")
    parts = text.split("/")
    if text.startswith("/") or ".." in parts or "" in parts:
        raise AnswerFormatError(f"unsafe file path {text!r}: use a relative path inside the agent's folder")
    return text


def _info_path(info: str) -> str | None:
    for word in info.split():
        if "." in word:
            found = _as_path(word)
            if found:
                return found
    return None


def _parse_rewrite(lines: list[str], entry_file: str) -> dict[str, str]:
    if any(_SEARCH.match(line) for line in lines):
        raise AnswerFormatError("the answer has SEARCH/REPLACE blocks; a whole-file answer was asked for")
    named: dict[str, str] = {}
    unnamed: list[str] = []
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        mark, info = fence.group(1), fence.group(2)
        close = next(
            (
                k
                for k in range(i + 1, len(lines))
                if re.fullmatch(rf"\s*{re.escape(mark[0])}{{{len(mark)},}}\s*", lines[k])
            ),
            None,
        )
        if close is None:
            raise AnswerFormatError(f"the code block opened at line {i + 1} is not closed (answer cut off?)")
        body = _join(lines[i + 1 : close])
        path = _info_path(info) or _previous_path(lines, i)
        language = info.split()[0].lower() if info.split() else ""
        if path:
            named[path] = body
        elif language in _CODE_LANGS or language in _entry_tags(entry_file):
            unnamed.append(body)
        i = close + 1
    if entry_file not in named and unnamed:
        if len(unnamed) > 1:
            raise AnswerFormatError(
                f"{len(unnamed)} code blocks without a file name; put the file name on the "
                f"line before the block with the whole file"
            )
        named[entry_file] = unnamed[0]
    if not named:
        raise AnswerFormatError("no fenced code block with the whole file in the answer")
    for path, body in named.items():
        if not body.strip():
            raise AnswerFormatError(f"the code block for {path} is empty")
    return named


def _previous_path(lines: list[str], fence_index: int) -> str | None:
    j = fence_index - 1
    while j >= 0 and not lines[j].strip():
        j -= 1
    if j < 0 or _FENCE.match(lines[j]):
        return None
    return _as_path(lines[j])


def extract_description(text: str, limit: int = 200) -> str:
    """A one-line description of the change: the answer's `Change: ...` line, else its first line of prose."""
    lines = text.splitlines()
    for line in lines:
        found = _CHANGE_LINE.match(line.strip())
        if found:
            return _clip(found.group(1), limit)
    in_fence = False
    for line in lines:
        if _SEARCH.match(line):
            break
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        stripped = line.strip().lstrip("#*->").strip()
        if not in_fence and stripped and not _names_path(stripped):
            return _clip(stripped, limit)
    return ""


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.replace("`", "").replace("**", "").split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _names_path(line: str) -> bool:
    try:
        return _as_path(line) is not None
    except AnswerFormatError:
        return True


def parse_diagnosis(text: str) -> dict[str, str]:
    """{"summary", "proposed_improvement", "implementation_plan"} from a JSON answer, fenced or bare.

    Lists (a plan as steps) become numbered lines; `AnswerFormatError` when no
    JSON object has the three keys.
    """
    if not text or not text.strip():
        raise AnswerFormatError("the diagnosis answer is empty")
    found_any: dict | None = None
    for candidate in _json_objects(text):
        if all(key in candidate for key in DIAGNOSIS_KEYS):
            return {key: _as_text(key, candidate[key]) for key in DIAGNOSIS_KEYS}
        found_any = found_any or candidate
    if found_any is None:
        raise AnswerFormatError("no JSON object in the diagnosis answer")
    missing = [key for key in DIAGNOSIS_KEYS if key not in found_any]
    raise AnswerFormatError(f"the diagnosis JSON lacks {', '.join(missing)} (keys must be {', '.join(DIAGNOSIS_KEYS)})")


def _json_objects(text: str):
    """JSON objects in the text: fenced blocks first, then any object starting at a '{'."""
    for block in re.findall(r"(?:```|~~~)[^\n]*\n(.*?)(?:```|~~~)", text, flags=re.DOTALL):
        try:
            value = json.loads(block)
        except ValueError:
            continue
        if isinstance(value, dict):
            yield value
    decoder = json.JSONDecoder()
    pos = text.find("{")
    tries = 0
    while pos != -1 and tries < 200:
        tries += 1
        try:
            value, end = decoder.raw_decode(text, pos)
        except ValueError:
            pos = text.find("{", pos + 1)
            continue
        if isinstance(value, dict):
            yield value
        pos = text.find("{", end)


def _as_text(key: str, value: Any) -> str:
    if value is None:
        raise AnswerFormatError(f"the diagnosis {key} is null")
    if isinstance(value, list):
        return "\n".join(f"{n}. {_as_text(key, v)}" for n, v in enumerate(value, 1))
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value).strip()
