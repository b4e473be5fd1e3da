"""`--bootstrap` (SIA): a public/private task folder without a seed program gets one written by the meta-agent.

SIA (the Self-Improving Agent of the four-level loops) starts with no seed:
its meta-agent reads the task's `task.md` and writes the first target agent.
Here the meta-agent (`--model`) is shown `data/public/task.md`, the files of a
`reference/` template (at the folder's top or under `data/public/`) and the
beginnings of the other public files (the sample descriptions), with the
sandbox's protocol (run as `python solution.py` beside `data/public/`, write
the submission file, define `main()` and call it under `if __name__ ==
"__main__":`). The answer's Python block is the seed. A seed that fails
validation (it must compile, keep `main()` with no required parameter, call
it under the main guard, and pass the checks every child passes) goes back to
the model with the reason, up to TRIES answers in all; every call is booked
in `llm_calls` with purpose `bootstrap` against node 0, and the seed that
passes becomes node 0 ("written by the meta-agent from task.md").
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from engine import pyast
from engine.errors import UserError

TRIES = 3
SAMPLE_CHARS = 600  # of each other public file shown
REFERENCE_CHARS = 8000  # of each reference file shown
FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL)

SYSTEM = (
    "You write the first version of a program for a task, to be improved later by an automated search. "
    "Write a complete, simple, correct program that follows the task's rules exactly. Answer with the whole "
    "program in one ```python block."
)


def _text(path: Path, limit: int) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return text if len(text) <= limit else text[:limit] + "\n[...]"


def _references(root: Path) -> list[tuple[str, str]]:
    found = []
    for base in (root / "reference", root / "data" / "public" / "reference"):
        if base.is_dir():
            found += [
                (p.relative_to(root).as_posix(), _text(p, REFERENCE_CHARS))
                for p in sorted(base.rglob("*"))
                if p.is_file() and not p.name.startswith(".")
            ]
    return found


def bootstrap_messages(task) -> list[dict]:
    """What the meta-agent is shown: task.md, the reference template, samples, and the sandbox's protocol."""
    root = Path(task.root)
    public = root / "data" / "public"
    parts = ["# The task (data/public/task.md)", _text(public / "task.md", 20_000).strip()]
    references = _references(root)
    if references:
        parts.append("# Reference template (adapt it; do not copy blindly)")
        parts += [f"## {name}\n```\n{text}\n```" for name, text in references]
    samples = [
        p
        for p in sorted(public.rglob("*"))
        if p.is_file() and p.name != "task.md" and "reference" not in p.relative_to(public).parts
    ]
    if samples:
        parts.append("# The public files (their beginnings)")
        parts += [f"## {p.relative_to(root).as_posix()}\n```\n{_text(p, SAMPLE_CHARS)}\n```" for p in samples]
    parts += [
        "# How the program runs",
        f"It is run as `python {task.entry_file}` in a folder that holds it and data/public/ (same paths as "
        f"above) and nothing else; it must write its submission to `{task.answer_file}` in its working "
        "directory. Define a function `main()` that does the work, and call it at the end under "
        '`if __name__ == "__main__":`. Standard library only unless the task says otherwise; no network.',
    ]
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n\n".join(parts)}]


def _calls_main(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test):
            return any(
                isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "main" for n in ast.walk(node)
            )
    return False


def seed_problem(source: str, task) -> str | None:
    """Why this program cannot be the seed, or None."""
    from engine.mutators import check_child

    reason = check_child({task.entry_file: source}, task.entry_file, "main", ())
    if reason:
        return reason
    if not _calls_main(pyast.parse(source)):
        return 'it never calls main(): end it with if __name__ == "__main__": main()'
    return None


async def write_seed(client, model: str, task) -> tuple[str, int]:
    """(the seed's source, the try that passed); UserError with the last reason after TRIES answers."""
    messages = bootstrap_messages(task)
    why: str | None = "no answer"
    for attempt in range(TRIES):
        answer = await client.complete(
            messages, model=model, purpose="bootstrap", node_id=0, key=f"bootstrap try {attempt}", temperature=0.0
        )
        found = FENCE.search(answer.text)
        source = (found.group(1) if found else answer.text).strip("\n") + "\n"
        why = "the answer holds no ```python block" if not found else seed_problem(source, task)
        if why is None:
            return source, attempt + 1
        messages = messages + [
            {"role": "assistant", "content": answer.text},
            {
                "role": "user",
                "content": f"That program cannot be used: {why}. Answer again with "
                "the whole corrected program in one ```python block.",
            },
        ]
    raise UserError(f"--bootstrap: the meta-agent's seed failed validation {TRIES} times (the last: {why})")
