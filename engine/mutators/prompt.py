"""The LLM mutator's prompts: pure functions from a `PromptContext` to chat messages.

`build_mutation_prompt` asks for a child: the task, the entry point and its
signature, the parent's files, feedback from the parent's failed or weakest
DEV instances (the caller passes only those; a `PromptContext` has no place
for holdout results), the lineage from the root, one or two inspirations from
the archive, an optional diagnosis to implement, and the answer format
(SEARCH/REPLACE blocks or a whole file). `build_diagnosis_prompt` asks first
for a JSON diagnosis (DGM/HGM "diagnose, then implement");
`build_retry_message` tells the model which of its blocks did not apply and
what the file really says there.

Every part is bounded: feedback to `max_feedback_items` items and
`max_feedback_chars` characters (2,500 at most per item; a stderr keeps its
end), each file to `max_file_chars` (its first and last lines), the lineage
to its last `max_lineage_steps` steps, inspirations to `max_inspiration_chars`;
whatever is cut is replaced by a marker saying how much.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from engine.mutators.answers import ANSWER_FORMATS, DIAGNOSIS_KEYS
from engine.mutators.base import MutationError
from engine.mutators.edits import BlockFailure, find_editable
from engine.mutators.region import END, START

NodeId = int | str
_MAX_DESCRIPTION_CHARS = 300
_MAX_RETRY_SEARCH_CHARS = 2_000
_MAX_FEEDBACK_ITEM_CHARS = 2_500  # one item, however much room the others leave


@dataclass(frozen=True)
class InstanceFeedback:
    instance_id: str
    status: str  # e.g. "ok", "error", "timeout", "invalid"
    score: float | None  # None when the run produced no score
    feedback: str = ""  # the grader's one line
    stderr_tail: str = ""  # the end of the agent's stderr


@dataclass(frozen=True)
class LineageStep:
    node_id: NodeId
    description: str  # what this node changed from its parent ("seed" for the root)
    mean_score: float | None  # mean dev score, None before any evaluation
    n_evals: int


@dataclass(frozen=True)
class Inspiration:
    node_id: NodeId
    mean_score: float | None
    files: Mapping[str, str]


@dataclass(frozen=True)
class PromptContext:
    task_description: str
    entry_file: str
    entry_function: str
    entry_args: tuple[str, ...]
    parent_files: Mapping[str, str]
    feedback: Sequence[InstanceFeedback] = ()  # the parent's failed or weakest DEV instances only
    lineage: Sequence[LineageStep] = ()  # root -> parent
    inspirations: Sequence[Inspiration] = ()  # one or two other archive nodes (the archive's best, for ADAS)
    archive_mode: bool = False  # ADAS: the inspirations are the archive to write a new agent from
    answer_format: str = "diff"  # "diff" (SEARCH/REPLACE blocks) or "rewrite" (whole file)
    diagnosis: Mapping | None = None  # from the diagnose step, to implement
    notes: Sequence[tuple[int, str]] = ()  # improvement notes of the lineage (node, markdown), root first
    instruction: str | None = None  # --evolve-prompts: the chosen instruction, in place of MUTATION_INSTRUCTION
    recommendations: Sequence[str] = ()  # --meta-recommendations: the current version's recommendations
    recommendations_version: int = 0  # their version (0: none yet)
    max_file_chars: int = 60_000  # per file shown
    max_feedback_items: int = 6
    max_feedback_chars: int = 6_000  # all feedback items together
    max_lineage_steps: int = 12
    max_inspiration_chars: int = 16_000  # all inspirations' files together

    def __post_init__(self) -> None:
        if self.answer_format not in ANSWER_FORMATS:
            raise ValueError(f"answer_format must be one of {ANSWER_FORMATS}, not {self.answer_format!r}")


# --- messages ----------------------------------------------------------------------------------------


def build_mutation_prompt(ctx: PromptContext) -> list[dict]:
    """[system, user] messages asking for an improved child of the parent, in `ctx.answer_format`."""
    marked = _has_markers(ctx)
    system = (
        (ctx.instruction or MUTATION_INSTRUCTION)
        + "\n\n"
        + (_diff_format(ctx, marked) if ctx.answer_format == "diff" else _rewrite_format(ctx, marked))
    )
    sections = [
        _section("Task", ctx.task_description.strip()),
        _section("Entry point", _entry_point(ctx)),
        _section("Current code (the parent)", _files(ctx.parent_files, ctx.entry_file, ctx.max_file_chars)),
    ]
    if marked:
        sections.append(_section("Editable region", _region_rule(ctx)))
    if ctx.diagnosis:  # asymmetric information (SIA): the reviewer saw the history, the implementer sees the code
        sections.append(_section("Diagnosis to implement", render_diagnosis(ctx.diagnosis)))
        sections.extend(_recommendations(ctx))
        sections.append(_section("Your answer", _ask(ctx, marked)))
        return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(sections)}]
    sections.append(
        _section(
            "Results of the parent on development instances (failed or weakest)",
            render_feedback(ctx.feedback, ctx.max_feedback_items, ctx.max_feedback_chars),
        )
    )
    if ctx.lineage:
        sections.append(
            _section(
                "Lineage (root to parent: what each step changed, and its score)",
                render_lineage(ctx.lineage, ctx.max_lineage_steps),
            )
        )
    if ctx.inspirations:
        title = (
            "The archive so far: agents with their scores, best first (learn from them and write a new, "
            "better agent; do not edit them)"
            if ctx.archive_mode
            else "Other agents from the archive (for ideas only; do not edit them)"
        )
        sections.append(
            _section(title, render_inspirations(ctx.inspirations, ctx.entry_file, ctx.max_inspiration_chars))
        )
    sections.extend(_recommendations(ctx))
    sections.append(_section("Your answer", _ask(ctx, marked)))
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(sections)}]


def _recommendations(ctx: PromptContext) -> list[str]:
    """The scratchpad's section (--meta-recommendations), when it has a version."""
    if not ctx.recommendations:
        return []
    title = f"Recommendations from a review of the search so far (version {ctx.recommendations_version})"
    return [_section(title, render_recommendations(ctx.recommendations))]


def render_recommendations(items: Sequence[str]) -> str:
    """'1. first\n2. second': the recommendations as a numbered list."""
    return "\n".join(f"{i}. {text}" for i, text in enumerate(items, 1))


def build_diagnosis_prompt(ctx: PromptContext) -> list[dict]:
    """[system, user] messages asking for a JSON diagnosis of the parent (no code); inspirations are left out."""
    system = _SYSTEM.format(role="diagnose why a program falls short and plan one improvement") + (
        "\n\nDo not write code. Answer with a single JSON object and nothing else."
    )
    keys = ", ".join(f'"{k}"' for k in DIAGNOSIS_KEYS)
    ask = (
        f"Read the code and the results above. Find the most important reason the agent scores low or fails, "
        f"and propose one improvement that could be implemented in a single edit of {ctx.entry_file}.\n"
        f"Answer with one JSON object with exactly the keys {keys}, each a string:\n"
        '```json\n{\n  "summary": "what goes wrong and why, from the evidence above",\n'
        '  "proposed_improvement": "the one change to make, and why it should raise the score",\n'
        '  "implementation_plan": "step by step, which code to change and how"\n}\n```'
    )
    sections = [
        _section("Task", ctx.task_description.strip()),
        _section("Entry point", _entry_point(ctx)),
        _section("Current code", _files(ctx.parent_files, ctx.entry_file, ctx.max_file_chars)),
    ]
    if _has_markers(ctx):
        sections.append(_section("Editable region", _region_rule(ctx)))
    sections.append(
        _section(
            "Results on development instances (failed or weakest)",
            render_feedback(ctx.feedback, ctx.max_feedback_items, ctx.max_feedback_chars),
        )
    )
    if ctx.lineage:
        sections.append(
            _section(
                "Lineage (root to this agent: what each step changed, and its score)",
                render_lineage(ctx.lineage, ctx.max_lineage_steps),
            )
        )
    if ctx.notes:
        sections.append(
            _section(
                "Improvement notes of this lineage (earlier reviews: what was diagnosed and "
                "planned, oldest first; do not repeat what did not work)",
                render_notes(ctx.notes),
            )
        )
    sections.append(_section("Your answer", ask))
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(sections)}]


def build_retry_message(
    failures: Sequence[BlockFailure], *, resend_all: bool = False, answer_format: str = "diff"
) -> dict:
    """A user message listing each block (or file) that did not apply, with the file's closest lines.

    By default the message says the other blocks were applied and asks for
    corrected versions of the failed ones only, matched against the file as it
    now is; with `resend_all` it says nothing was applied and asks for the
    whole answer again. For the "rewrite" format it asks for the whole file again.
    """
    if not failures:
        raise ValueError("build_retry_message needs at least one failure")
    n = len(failures)
    head = f"{n} of your edits did not apply." if n > 1 else "One of your edits did not apply."
    parts = [head]
    for failure in failures:
        what = f"Block {failure.index}" if failure.search else f"Edit {failure.index}"
        parts.append(f"## {what} ({failure.path}): {failure.reason}")
        if failure.search:
            parts.append("Your SEARCH text was:\n" + _fenced(_clip_middle(failure.search, _MAX_RETRY_SEARCH_CHARS)))
        if failure.closest:
            count = failure.closest.count("\n") + 1
            span = (
                f"line {failure.closest_line}"
                if count == 1
                else f"lines {failure.closest_line}-{failure.closest_line + count - 1}"
            )
            parts.append(f"The closest lines in {failure.path} ({span}) are:\n" + _fenced(failure.closest))
    if answer_format == "rewrite":
        parts.append(
            "Nothing was applied. Send the whole file again, corrected, with its name on the line before "
            "one fenced code block."
        )
    elif resend_all:
        parts.append(
            "Nothing was applied. Send your whole answer again, corrected, in the same format. "
            "A SEARCH part must copy lines of the current file exactly, indentation included."
        )
    else:
        parts.append(
            "The other blocks, if any, were applied. Send corrected SEARCH/REPLACE blocks for the "
            "edits above only; each SEARCH part must copy lines of the file as it is now exactly, "
            "indentation included (use the closest lines shown). Do not repeat blocks that applied."
        )
    return {"role": "user", "content": "\n\n".join(parts)}


# --- parts, bounded ----------------------------------------------------------------------------------


def render_feedback(items: Sequence[InstanceFeedback], max_items: int, max_chars: int) -> str:
    """The first `max_items` items, `max_chars` characters in all (stderr keeps its end); a marker for the rest."""
    if not items:
        return "No failed or weak development instances were reported for the parent."
    shown = list(items[:max_items])
    rest = len(items) - len(shown)
    tail_note = f"[... {rest} more instance(s) not shown]" if rest else ""
    budget = max(max_chars - len(tail_note) - len(shown), 0) // len(shown)  # newlines between items count
    budget = min(budget, _MAX_FEEDBACK_ITEM_CHARS)
    parts = []
    for item in shown:
        score = "no score" if item.score is None else f"score {item.score:.3f}"
        head = _clip_end(f"- instance {item.instance_id}: {item.status}, {score}", budget)
        text = head
        room = budget - len(text)
        line = " ".join(item.feedback.split())
        if line and room > 12:
            text += "\n  " + _clip_end(line, min(room - 3, max(budget // 3, 80)))
            room = budget - len(text)
        stderr = item.stderr_tail.rstrip()
        if stderr and room > 40:
            fence = _fence_for(stderr)
            overhead = len("\n  stderr (end):\n") + 2 * len(fence) + 2
            text += f"\n  stderr (end):\n{fence}\n{_clip_start(stderr, room - overhead)}\n{fence}"
        parts.append(text)
    if tail_note:
        parts.append(tail_note)
    return "\n".join(parts)


def render_lineage(steps: Sequence[LineageStep], max_steps: int) -> str:
    """One line per step (root first), with the score and its change from the step before; older steps cut."""
    shown = list(steps[-max_steps:]) if max_steps > 0 else []
    lines = []
    if len(steps) > len(shown):
        lines.append(f"[... {len(steps) - len(shown)} earlier step(s) from the root not shown]")
    previous = None
    if len(steps) > len(shown) and shown:
        previous = steps[len(steps) - len(shown) - 1].mean_score
    for n, step in enumerate(shown):
        is_root = n == 0 and len(steps) == len(shown)
        label = f"node {step.node_id}" + (" (root)" if is_root else "") + (" (parent)" if n == len(shown) - 1 else "")
        desc = _clip_end(" ".join(step.description.split()) or "no description", _MAX_DESCRIPTION_CHARS)
        if step.mean_score is None:
            score = "not evaluated yet"
        else:
            score = f"mean dev score {step.mean_score:.3f} over {step.n_evals} evaluation(s)"
            if previous is not None:
                score += f" ({step.mean_score - previous:+.3f})"
        lines.append(f"- {label}: {desc} -> {score}")
        previous = step.mean_score if step.mean_score is not None else previous
    return "\n".join(lines)


def render_inspirations(inspirations: Sequence[Inspiration], entry_file: str, max_chars: int) -> str:
    """Each inspiration's score and files, `max_chars` characters of files in all."""
    if not inspirations:
        return ""
    per = max_chars // len(inspirations)
    parts = []
    for insp in inspirations:
        score = "not evaluated" if insp.mean_score is None else f"mean dev score {insp.mean_score:.3f}"
        paths = _ordered(insp.files, entry_file)
        per_file = per // max(len(paths), 1)
        body = "\n\n".join(f"{path}\n{_fenced(_clip_lines(insp.files[path], per_file), _lang(path))}" for path in paths)
        parts.append(f"### node {insp.node_id} ({score})\n{body}")
    return "\n\n".join(parts)


def render_notes(notes: Sequence[tuple[int, str]], max_chars: int = 6_000) -> str:
    """The lineage's notes, the newest kept whole when they must be cut."""
    parts = [f"### Note on node {node}\n{text.strip()}" for node, text in notes]
    while len(parts) > 1 and sum(len(p) for p in parts) > max_chars:
        parts.pop(0)
    return "\n\n".join(parts)[-max_chars:]


def note_markdown(diagnosis: Mapping) -> str:
    """A diagnosis as the node's improvement note (markdown, SIA's improvement.md)."""
    return "\n\n".join(
        f"**{key.replace('_', ' ').capitalize()}**: {_as_text(value)}" for key, value in diagnosis.items()
    )


def render_diagnosis(diagnosis: Mapping) -> str:
    order = [k for k in DIAGNOSIS_KEYS if k in diagnosis] + [k for k in diagnosis if k not in DIAGNOSIS_KEYS]
    return "\n".join(f"{key.replace('_', ' ').capitalize()}: {_as_text(diagnosis[key])}" for key in order)


def _as_text(value: object) -> str:
    if isinstance(value, (list, tuple)):
        return "\n" + "\n".join(f"{n}. {v}" for n, v in enumerate(value, 1))
    return str(value).strip()


# --- fixed text --------------------------------------------------------------------------------------

_SYSTEM = (
    "You are an expert programmer and researcher helping to {role}. The program is an agent that a "
    "fixed runner calls on many instances of a task; its score is measured on instances you do not see, "
    "so prefer general improvements to tricks fitted to the examples shown."
)
# the mutation prompt's instruction part: the first prompt of --evolve-prompts' population
MUTATION_INSTRUCTION = _SYSTEM.format(role="improve a program through small, well-reasoned changes")


def _diff_format(ctx: PromptContext, marked: bool) -> str:
    scope = (
        f"Edit only lines between the {START} and {END} markers of {ctx.entry_file}; no other file."
        if marked
        else "You may edit any file shown, or create a new one."
    )
    return f"""Answer format: SEARCH/REPLACE blocks.
First write one line `Change: <what you change and why, in one sentence>`. Then give one or more blocks, each exactly like this:

{ctx.entry_file}
<<<<<<< SEARCH
<lines copied exactly from the current file>
=======
<the new lines that replace them>
>>>>>>> REPLACE

Rules:
- The line before each block names the file it edits (without it, {ctx.entry_file}).
- The SEARCH part must match the current file exactly, character for character: whole lines, with their indentation, comments and blank lines. Never write line numbers or "..." in it.
- Keep each SEARCH part short but unique in the file: the lines you change plus a line or two of context.
- Blocks apply in order; a later block must match the file as the earlier blocks left it. Do not let two blocks overlap.
- To delete lines, leave the REPLACE part empty. To create a new file, name it and leave the SEARCH part empty.
- {scope}
- A block whose SEARCH part is not found is not applied; you will be shown the closest lines and asked again."""


def _rewrite_format(ctx: PromptContext, marked: bool) -> str:
    scope = (
        f"Keep every line outside the {START}/{END} markers, and the markers themselves, exactly as they are: "
        "only the code between them may differ."
        if marked
        else "You may also give other files in the same way, each with its name on the line before its block."
    )
    return f"""Answer format: the whole new file.
First write one line `Change: <what you change and why, in one sentence>`. Then give the complete new content of {ctx.entry_file}: a line with the file name, then the whole file in one fenced code block:

{ctx.entry_file}
```python
<the complete file>
```

Rules:
- Give the whole file, every line of it, not a fragment; never write "..." or "rest unchanged" for code you keep.
- {scope}
- Put nothing else in a code block."""


def _entry_point(ctx: PromptContext) -> str:
    if not ctx.entry_function:  # a program in another language (engine/lang): the evaluator runs all of it
        language = _lang(ctx.entry_file) or "its language"
        return (
            f"The task's evaluator builds and runs the whole program `{ctx.entry_file}` ({language}). It must "
            "stay a complete, valid program in that language: a child that does not parse is rejected before "
            "it is run, and one that does not build or run scores 0."
        )
    args = ", ".join(ctx.entry_args)
    return (
        f"The runner imports `{ctx.entry_file}` and calls `{ctx.entry_function}({args})`. Keep "
        f"`{ctx.entry_function}` a top-level function of {ctx.entry_file} with the same name and the same first "
        f"positional parameters ({args}), in that order; any parameter you add needs a default. The module must "
        "import without side effects (no top-level loops or I/O). A child that does not compile, import, or keep "
        "this signature is rejected."
    )


def _region_rule(ctx: PromptContext) -> str:
    try:
        region = find_editable(ctx.parent_files, ctx.entry_file)
    except MutationError as exc:
        return str(exc)
    assert region is not None
    comment = "#" if ctx.entry_file.endswith(".py") else _comment_of(ctx.entry_file)
    return (
        f"{ctx.entry_file} has `{comment} {START}` and `{comment} {END}` marker lines. Only the code between them "
        f"(lines {region.first_line}-{region.last_line}) may change. Everything else, the markers included, "
        "and every other file must stay exactly as it is; an edit outside the markers is rejected."
    )


def _ask(ctx: PromptContext, marked: bool) -> str:
    goal = (
        "Implement the diagnosis above"
        if ctx.diagnosis
        else "Propose one focused improvement that should raise the agent's score on unseen instances of the task, "
        "guided by the results and the lineage above (avoid repeating changes that lowered the score)"
    )
    where = ", changing only the code between the EVOLVE-BLOCK markers" if marked else ""
    fmt = (
        "Answer with the `Change:` line and SEARCH/REPLACE blocks, as the system message describes."
        if ctx.answer_format == "diff"
        else f"Answer with the `Change:` line and the whole new {ctx.entry_file} in one fenced block, as the system "
        "message describes."
    )
    keep = f" Keep the signature of `{ctx.entry_function}`." if ctx.entry_function else ""
    return f"{goal}{where}.{keep} {fmt}"


def _has_markers(ctx: PromptContext) -> bool:
    text = ctx.parent_files.get(ctx.entry_file, "")
    return START in text and END in text


# --- text helpers ------------------------------------------------------------------------------------


def _section(title: str, body: str) -> str:
    return f"# {title}\n{body}"


def _files(files: Mapping[str, str], entry_file: str, max_chars: int) -> str:
    return "\n\n".join(
        f"{path}\n{_fenced(_clip_lines(files[path], max_chars), _lang(path))}" for path in _ordered(files, entry_file)
    )


def _ordered(files: Mapping[str, str], entry_file: str) -> list[str]:
    return ([entry_file] if entry_file in files else []) + sorted(p for p in files if p != entry_file)


def _lang(path: str) -> str:
    """The fence tag of a file: python, or its language's (engine/lang/registry.py), else none."""
    if path.endswith(".py"):
        return "python"
    from engine.lang.registry import language_of

    language = language_of(path)
    return language.fences[0] if language else ""


def _comment_of(path: str) -> str:
    from engine.lang.registry import language_of

    language = language_of(path)
    return language.line_comment if language else "#"


def _fence_for(text: str) -> str:
    if "```" not in text:
        return "```"
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=0)
    return "`" * max(3, longest + 1)


def _fenced(text: str, lang: str = "") -> str:
    fence = _fence_for(text)
    return f"{fence}{lang}\n{text.rstrip(chr(10))}\n{fence}"


def _clip_end(text: str, limit: int) -> str:
    """Keep the start of one line of text."""
    if len(text) <= limit:
        return text
    marker = f" [... {len(text)} characters, cut]"
    return text[: max(limit - len(marker), 0)] + marker if limit > len(marker) else text[: max(limit, 0)]


def _clip_start(text: str, limit: int) -> str:
    """Keep the end of the text (a stderr tail), with a marker saying how much was cut."""
    if len(text) <= limit:
        return text
    keep = max(limit - len(f"[... {len(text)} characters cut ...]\n"), 0)
    if not keep:
        return f"[... {len(text)} characters cut ...]"[: max(limit, 0)]
    kept = text[len(text) - keep :]
    newline = kept.find("\n", 0, 200)  # start at a whole line when one begins near the cut
    if newline != -1:
        kept = kept[newline + 1 :]
    return f"[... {len(text) - len(kept)} characters cut ...]\n" + kept


def _clip_middle(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters cut ...]\n{text[-half:]}"


def _clip_lines(text: str, limit: int) -> str:
    """A file cut to `limit` characters of its first and last whole lines, plus a marker naming the lines left out."""
    if len(text) <= limit:
        return text
    head_end = text.rfind("\n", 0, limit * 2 // 3) + 1  # 0 when not even one line fits
    tail_start = text.find("\n", max(len(text) - limit // 3 - 1, head_end)) + 1 or len(text)
    tail_start = max(tail_start, head_end)
    first_cut = text.count("\n", 0, head_end) + 1
    last_cut = first_cut + text.count("\n", head_end, tail_start) - 1
    marker = (
        f"[... lines {first_cut}-{last_cut} ({tail_start - head_end} characters) left out of this prompt; "
        "they exist in the file but cannot be quoted ...]\n"
    )
    return text[:head_end] + marker + text[tail_start:]
