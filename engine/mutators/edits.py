"""Apply an LLM's edits to a parent's files; a block that does not apply is reported, never dropped.

An edit is a SEARCH/REPLACE block (`EditBlock`): the SEARCH lines must be found
in the file, and are replaced by the REPLACE lines. `apply_blocks` applies
blocks in order, each to the file as the earlier blocks left it. A SEARCH text
is located, in this order:

1. exactly, as whole lines (the first occurrence, preferring one inside the
   editable region);
2. whitespace-tolerant: trailing spaces ignored, and the whole block may be
   indented uniformly more or less than the file (the REPLACE lines are then
   shifted by the same amount); leading and trailing blank SEARCH lines may be
   missing from the file.

A block that matches nowhere is a `BlockFailure` carrying the file's closest
lines (rare-token overlap over line windows, refined with difflib), so the model
can be told what the file really says. An empty SEARCH creates a file that
does not exist (or fills an empty one).

When the entry file has `# EVOLVE-BLOCK-START` / `# EVOLVE-BLOCK-END` comment
lines (`EditableRegion`, found by `find_editable`), only the lines strictly
between them may change: a block whose changed lines reach outside (unchanged
context lines around the change are fine), that writes a marker, or that
edits or creates any other file, is a failure. `apply_rewrite` applies whole
files under the same rule.
"""

from __future__ import annotations

import difflib
import heapq
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from dataclasses import replace as dc_replace

from engine.mutators.base import MutationError
from engine.mutators.region import END, START, marker_lines

_TOKEN = re.compile(r"\w+|\S")
_REFINE_WINDOWS = 12
_MAX_SEARCH_CHARS_IN_REASON = 60


@dataclass(frozen=True)
class EditBlock:
    path: str  # file the block edits
    search: str  # exact lines to find ("" = create the file); ends with a newline when not empty
    replace: str  # lines to put instead ("" = delete the SEARCH lines)


@dataclass(frozen=True)
class BlockFailure:
    index: int  # 1-based position of the block (or rewritten file) in the answer
    path: str
    search: str  # the block's SEARCH text ("" for a rewrite)
    reason: str  # one line
    closest: str = ""  # the file's lines nearest the SEARCH text, verbatim; "" when not applicable
    closest_line: int = 0  # 1-based line of `closest` in the file as it was when the block was tried


@dataclass(frozen=True)
class ApplyResult:
    files: dict[str, str]  # the file set after every block that applied
    failures: list[BlockFailure]  # one per block that did not apply, in answer order
    applied: int = 0  # how many blocks (or files) applied

    @property
    def ok(self) -> bool:
        return not self.failures


@dataclass(frozen=True)
class EditableRegion:
    path: str  # the entry file
    first_line: int  # 1-based, inclusive: the line after the START marker
    last_line: int  # 1-based, inclusive: the line before the END marker (first_line - 1 when empty)

    def describe(self) -> str:
        return f"lines {self.first_line}-{self.last_line} of {self.path} (between the EVOLVE-BLOCK markers)"


def find_editable(files: Mapping[str, str], entry_file: str) -> EditableRegion | None:
    """The EVOLVE-BLOCK region of the entry file, None without markers; `MutationError` if START has no END.

    Markers are comment lines containing EVOLVE-BLOCK-START / -END: the first
    START and the first END after it, as `engine.mutators.region` reads them.
    """
    text = files.get(entry_file)
    if text is None or START not in text:
        return None
    found = marker_lines(text.splitlines(), where=f" of {entry_file}")
    if found is None:
        return None
    return EditableRegion(entry_file, found[0] + 1, found[1] - 1)


def apply_blocks(
    files: Mapping[str, str], blocks: Sequence[EditBlock], editable: EditableRegion | None = None
) -> ApplyResult:
    """Apply `blocks` in order to a copy of `files`; every block either applies or is a `BlockFailure`."""
    out = dict(files)
    failures: list[BlockFailure] = []
    region = editable
    applied = 0
    for index, block in enumerate(blocks, 1):
        outcome = _apply_one(out, block, region, index)
        if isinstance(outcome, BlockFailure):
            failures.append(outcome)
            continue
        out[block.path], delta = outcome
        if region is not None and block.path == region.path:
            region = dc_replace(region, last_line=region.last_line + delta)
        applied += 1
    return ApplyResult(out, failures, applied)


def apply_rewrite(
    files: Mapping[str, str], rewrites: Mapping[str, str], editable: EditableRegion | None = None
) -> ApplyResult:
    """Replace whole files. With an EVOLVE-BLOCK, only the region of the entry file is taken from the rewrite.

    The rewritten entry file must keep every line outside its markers (trailing
    spaces aside); its region is then spliced into the parent byte for byte
    around it. Rewriting or creating any other file is then a failure.
    """
    out = dict(files)
    failures: list[BlockFailure] = []
    applied = 0
    for index, (path, text) in enumerate(rewrites.items(), 1):
        if text and not text.endswith("\n"):
            text += "\n"
        if not text.strip():
            failures.append(BlockFailure(index, path, "", f"the rewrite of {path} is empty"))
            continue
        if editable is None:
            out[path] = text
            applied += 1
            continue
        if path != editable.path:
            if files.get(path) == text:
                continue
            failures.append(BlockFailure(index, path, "", f"only {editable.describe()} may change, not {path}"))
            continue
        spliced = _splice_rewrite(files[path], text, editable, index)
        if isinstance(spliced, BlockFailure):
            failures.append(spliced)
        else:
            out[path] = spliced
            applied += 1
    return ApplyResult(out, failures, applied)


# --- one block ---------------------------------------------------------------------------------------


def _apply_one(
    files: dict[str, str], block: EditBlock, region: EditableRegion | None, index: int
) -> tuple[str, int] | BlockFailure:
    """(new text of block.path, change in its line count), or the failure."""
    path = block.path

    def fail(reason: str, closest: str = "", line: int = 0) -> BlockFailure:
        return BlockFailure(index, path, block.search, reason, closest, line)

    if region is not None and path != region.path:
        return fail(f"only {region.describe()} may change, not {path}")
    search_lines = block.search.splitlines()
    replace_lines = block.replace.splitlines()
    if region is not None and _writes_marker(replace_lines, search_lines):
        return fail(f"the REPLACE part adds or changes an {START}/{END} marker line; keep the markers as they are")
    text = files.get(path)
    if not any(s.strip() for s in search_lines):
        if text is not None and text.strip():
            return fail(f"empty SEARCH part, but {path} exists and is not empty; quote the lines to replace")
        new = "".join(r + "\n" for r in replace_lines)
        return new, len(replace_lines) - (len(text.splitlines()) if text else 0)
    if text is None:
        known = ", ".join(sorted(files)) or "none"
        return fail(f"file {path} does not exist (files: {known}); to create a file, leave SEARCH empty")

    exact = _exact_match(text, search_lines, replace_lines, region)
    if exact is not None:
        new_text, start = exact
        reason = _region_error(region, start, search_lines, replace_lines)
        if reason:
            return fail(reason, *_numbered_slice(text.splitlines(), start, len(search_lines)))
        return new_text, len(replace_lines) - len(search_lines)

    lines = text.splitlines(keepends=True)
    tolerant = _tolerant_match(lines, search_lines, replace_lines, region)
    if tolerant is None:
        line, closest = closest_lines(lines, search_lines)
        head = _first_words(search_lines)
        return fail(f"SEARCH text ({head}) not found in {path}, not even ignoring whitespace", closest, line)
    start, end, new_lines = tolerant
    old_bare = [s.rstrip("\r\n") for s in lines[start:end]]
    new_bare = [s.rstrip("\r\n") for s in new_lines]
    reason = _region_error(region, start, old_bare, new_bare)
    if reason:
        return fail(reason, *_numbered_slice([s.rstrip("\r\n") for s in lines], start, end - start))
    return "".join(lines[:start] + new_lines + lines[end:]), len(new_lines) - (end - start)


def _exact_match(
    text: str, search_lines: list[str], replace_lines: list[str], region: EditableRegion | None
) -> tuple[str, int] | None:
    """(new text, 0-based first line) for an exact whole-line match, preferring one inside the region."""
    needle = "".join(s + "\n" for s in search_lines)
    replacement = "".join(r + "\n" for r in replace_lines)
    found: list[tuple[int, int, bool]] = []  # (position, length, at end of file without newline)
    pos = text.find(needle)
    while pos != -1:
        if pos == 0 or text[pos - 1] == "\n":
            found.append((pos, len(needle), False))
            if region is None:
                break
        pos = text.find(needle, pos + 1)
    bare = needle[:-1]
    if not text.endswith("\n") and text.endswith(bare):
        pos = len(text) - len(bare)
        if pos == 0 or text[pos - 1] == "\n":
            found.append((pos, len(bare), True))
    if not found:
        return None
    choice = found[0]
    if region is not None and len(found) > 1:
        for candidate in found:
            line = text.count("\n", 0, candidate[0])
            if region.first_line - 1 <= line and line + len(search_lines) <= region.last_line:
                choice = candidate
                break
    pos, length, at_eof = choice
    new_piece = replacement[:-1] if at_eof and replacement else replacement
    return text[:pos] + new_piece + text[pos + length :], text.count("\n", 0, pos)


def _tolerant_match(
    lines: list[str], search_lines: list[str], replace_lines: list[str], region: EditableRegion | None
) -> tuple[int, int, list[str]] | None:
    """(start, end, replacement lines) ignoring trailing spaces and a uniform indentation shift."""
    stripped = [s.strip() for s in lines]
    variants = [search_lines]
    trimmed = _trim_blank(search_lines)
    if trimmed != search_lines:
        variants.append(trimmed)
    for variant in variants:
        want = [s.strip() for s in variant]
        m = len(want)
        chosen = None
        for i in range(len(lines) - m + 1):
            if stripped[i] != want[0] or stripped[i : i + m] != want:
                continue
            shift = _uniform_shift([lines[i + j].rstrip() for j in range(m)], [s.rstrip() for s in variant])
            if shift is None:
                continue
            if chosen is None:
                chosen = (i, shift)
            if region is None or region.first_line - 1 <= i and i + m <= region.last_line:
                chosen = (i, shift)
                break
        if chosen is None:
            continue
        i, (add, remove) = chosen
        ending = _ending(lines[i])
        new_lines = [_reindent(r, add, remove) + ending for r in replace_lines]
        return i, i + m, new_lines
    return None


def _uniform_shift(file_lines: list[str], search_lines: list[str]) -> tuple[str, str] | None:
    """(prefix to add, prefix to remove) turning search lines into file lines, the same for every line."""
    shift = None
    for f, s in zip(file_lines, search_lines):
        if not s.strip():
            continue
        if f.endswith(s) and not f[: len(f) - len(s)].strip():
            this = (f[: len(f) - len(s)], "")
        elif s.endswith(f) and not s[: len(s) - len(f)].strip():
            this = ("", s[: len(s) - len(f)])
        else:
            return None
        if shift is None:
            shift = this
        elif shift != this:
            return None
    return shift or ("", "")


def _reindent(line: str, add: str, remove: str) -> str:
    if not line.strip():
        return ""
    if add:
        return add + line
    if remove:
        return line[len(remove) :] if line.startswith(remove) else line.lstrip()
    return line


def _ending(line: str) -> str:
    return "\r\n" if line.endswith("\r\n") else "\n"


def _trim_blank(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]


def _region_error(region: EditableRegion | None, start: int, old: list[str], new: list[str]) -> str | None:
    """Why replacing old lines (from 0-based `start`) by new ones reaches outside the region, else None."""
    if region is None:
        return None
    p = 0
    while p < len(old) and p < len(new) and old[p].rstrip() == new[p].rstrip():
        p += 1
    q = 0
    while q < len(old) - p and q < len(new) - p and old[-1 - q].rstrip() == new[-1 - q].rstrip():
        q += 1
    first, last = start + p, start + len(old) - q  # changed lines [first, last), 0-based
    lo, hi = region.first_line - 1, region.last_line
    if lo <= first and last <= hi:
        return None
    where = f"lines {first + 1}-{last}" if last > first else f"an insertion before line {first + 1}"
    return f"the block changes {where}, outside {region.describe()}"


def _writes_marker(replace_lines: list[str], search_lines: list[str]) -> bool:
    """True when the marker comment lines of REPLACE differ from those of SEARCH."""

    def markers(lines: list[str]) -> list[str]:
        return [s.strip() for s in lines if s.strip().startswith("#") and (START in s or END in s)]

    return markers(replace_lines) != markers(search_lines)


def _first_words(search_lines: list[str]) -> str:
    first = next((s.strip() for s in search_lines if s.strip()), "")
    if len(first) > _MAX_SEARCH_CHARS_IN_REASON:
        first = first[:_MAX_SEARCH_CHARS_IN_REASON] + "..."
    return f"starting {first!r}" if first else "blank"


def _numbered_slice(lines: list[str], start: int, count: int) -> tuple[str, int]:
    return "\n".join(lines[start : start + max(count, 1)]), start + 1


# --- closest lines -----------------------------------------------------------------------------------


def closest_lines(lines: Sequence[str], search_lines: Sequence[str]) -> tuple[int, str]:
    """(1-based first line, the lines verbatim) of the window of the file most like the SEARCH lines.

    Windows as long as the SEARCH text (blank lines around it dropped) are
    ranked by the SEARCH tokens they contain, each weighted by its rarity in
    the file; the best few are re-ranked by `difflib.SequenceMatcher` on their
    whitespace-stripped text.
    """
    bare = [s.rstrip("\r\n") for s in lines]
    want = _trim_blank(list(search_lines))
    n = len(bare)
    if n == 0 or not want:
        return 0, ""
    m = min(len(want), n)
    target = {t for s in want for t in _TOKEN.findall(s)}
    line_tokens = [[t for t in _TOKEN.findall(s) if t in target] for s in bare]
    freq = Counter(t for tokens in line_tokens for t in tokens)
    weight = [sum(1.0 / freq[t] for t in tokens) for tokens in line_tokens]
    prefix = [0.0]
    for w in weight:
        prefix.append(prefix[-1] + w)
    starts = heapq.nlargest(_REFINE_WINDOWS, range(n - m + 1), key=lambda i: (prefix[i + m] - prefix[i], -i))
    text = "\n".join(s.strip() for s in want)
    matcher = difflib.SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(text)
    best = (-1.0, 0)
    for start in sorted(starts):
        matcher.set_seq1("\n".join(s.strip() for s in bare[start : start + m]))
        ratio = matcher.ratio()
        if ratio > best[0]:
            best = (ratio, start)
    start = best[1]
    return start + 1, "\n".join(bare[start : start + m])


# --- whole-file rewrite ------------------------------------------------------------------------------


def _splice_rewrite(old: str, new: str, region: EditableRegion, index: int) -> str | BlockFailure:
    path = region.path
    try:
        new_region = find_editable({path: new}, path)
    except MutationError as exc:
        return BlockFailure(index, path, "", str(exc))
    if new_region is None:
        return BlockFailure(index, path, "", f"the rewrite of {path} dropped the {START}/{END} markers")
    old_lines, new_lines = old.splitlines(keepends=True), new.splitlines(keepends=True)
    lo, hi = region.first_line - 1, region.last_line
    n_lo, n_hi = new_region.first_line - 1, new_region.last_line
    pairs = [(old_lines[:lo], new_lines[:n_lo], 0), (_trim_tail(old_lines[hi:]), _trim_tail(new_lines[n_hi:]), hi)]
    for before, after, offset in pairs:
        for k in range(max(len(before), len(after))):
            a = before[k].rstrip() if k < len(before) else None
            b = after[k].rstrip() if k < len(after) else None
            if a != b:
                line = offset + min(k, max(len(before) - 1, 0))
                closest, first = _numbered_slice([s.rstrip("\r\n") for s in old_lines], max(line - 1, 0), 3)
                return BlockFailure(
                    index,
                    path,
                    "",
                    f"the rewrite changes line {line + 1} of {path}, outside "
                    f"{region.describe()}; keep everything outside the markers as it is",
                    closest,
                    first,
                )
    return "".join(old_lines[:lo] + new_lines[n_lo:n_hi] + old_lines[hi:])


def _trim_tail(lines: list[str]) -> list[str]:
    end = len(lines)
    while end and not lines[end - 1].strip():
        end -= 1
    return lines[:end]
