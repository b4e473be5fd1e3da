"""The LLM mutator's own memory on the report and the live page: the recommendations and the prompts.

One section, the same on both pages: each version of the scratchpad (`--meta-recommendations`, newest
first, the one in force open) with the node count at which it was written, and each prompt of
`--evolve-prompts` with its parent, its children, their mean improvement (its UCB fitness) and its text.
Empty markup for a run that used neither. Every archive text is escaped.
"""

from __future__ import annotations

from html import escape
from typing import Any

SHOWN_VERSIONS = 20  # the newest versions on the page; the archive holds them all


def memory_part(archive) -> dict[str, Any] | None:
    """JSON-ready: {versions: [...newest first], prompts: [...]}; None when the run wrote neither."""
    versions = archive.recommendation_versions()
    standings = archive.prompt_standings()
    if not versions and not standings:
        return None
    return {
        "versions": [
            {"version": v.version, "written_at_nodes": v.written_at_nodes, "text": v.text, "llm_call": v.llm_call_id}
            for v in reversed(versions[-SHOWN_VERSIONS:])
        ],
        "n_versions": len(versions),
        "prompts": [
            {
                "id": s.prompt.id,
                "parent": s.prompt.parent_id,
                "children": s.children,
                "measured": s.measured,
                "fitness": s.improvement / s.children if s.children else 0.0,
                "written_at_nodes": s.prompt.written_at_nodes,
                "text": s.prompt.text,
            }
            for s in standings
        ],
    }


def memory_html(part: dict[str, Any] | None) -> str:
    """The section's markup ('' for none)."""
    if not part:
        return ""
    pieces = []
    if part["versions"]:
        items = []
        for i, v in enumerate(part["versions"]):
            lines = "".join(f"<li>{escape(_item(line))}</li>" for line in v["text"].splitlines() if line.strip())
            items.append(
                f'<details class="rec"{" open" if i == 0 else ""}><summary>version {v["version"]}, written at '
                f"{v['written_at_nodes']} nodes{' (in force)' if i == 0 else ''}</summary><ol>{lines}</ol></details>"
            )
        pieces.append(
            f'<details class="cfg memory-recommendations" open><summary>Recommendations (--meta-recommendations): '
            f"{part['n_versions']} version{'s' if part['n_versions'] != 1 else ''}</summary>{''.join(items)}</details>"
        )
    if part["prompts"]:
        rows = "".join(
            f"<tr><td>{p['id']}</td><td>{'-' if p['parent'] is None else p['parent']}</td><td>{p['children']}</td>"
            f"<td>{p['measured']}</td><td>{p['fitness']:.4f}</td><td>{p['written_at_nodes']}</td>"
            f'<td class="prompt-text">{escape(p["text"])}</td></tr>'
            for p in part["prompts"]
        )
        pieces.append(
            '<details class="cfg memory-prompts"><summary>Prompts (--evolve-prompts): '
            f"{len(part['prompts'])}, chosen by UCB over their children's improvement</summary>"
            '<table class="config"><tr><th>id</th><th>parent</th><th>children</th><th>measured</th>'
            f"<th>mean improvement</th><th>written at nodes</th><th>text</th></tr>{rows}</table></details>"
        )
    return "".join(pieces)


def _item(line: str) -> str:
    """A stored line '3. text' without its number (the list numbers it)."""
    head, _, rest = line.partition(". ")
    return rest if head.strip().isdigit() and rest else line
