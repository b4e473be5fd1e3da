"""What `runs show` prints of the LLM mutator's own memory: the recommendations in force and the prompts.

`--meta-recommendations` (engine/mutators/scratchpad.py): the latest version's items, with how many
versions were written and at which node count; `--evolve-prompts` (engine/mutators/prompt_population.py):
each prompt with its parent, its children and their mean improvement (its UCB fitness), and its first words.
"""

from __future__ import annotations

from dataclasses import dataclass

from archive.reads_prompts import PromptStanding, RecommendationsVersion

PROMPT_WORDS = 24  # of a prompt's text shown in its row


@dataclass(frozen=True)
class PromptMemory:
    versions: int  # recommendations versions written
    latest: RecommendationsVersion | None
    prompts: tuple[PromptStanding, ...]

    @property
    def empty(self) -> bool:
        return not self.versions and not self.prompts


def read_memory(archive) -> PromptMemory:
    """The run's recommendations and prompts (empty for a run that used neither)."""
    versions = archive.recommendation_versions()
    return PromptMemory(len(versions), versions[-1] if versions else None, tuple(archive.prompt_standings()))


def first_words(text: str, words: int = PROMPT_WORDS) -> str:
    split = text.split()
    return " ".join(split[:words]) + (" ..." if len(split) > words else "")


def memory_tables(memory: PromptMemory) -> list:
    """Rich tables: the recommendations in force, the prompts; none for a run without them."""
    from rich.table import Table

    tables = []
    if memory.latest is not None:
        latest = memory.latest
        table = Table(
            title=f"Recommendations in force: version {latest.version} of {memory.versions}, written at "
            f"{latest.written_at_nodes} nodes",
            title_justify="left",
            show_header=False,
        )
        table.add_column()
        for line in latest.text.splitlines():
            table.add_row(line)
        tables.append(table)
    if memory.prompts:
        table = Table(title="Prompts (--evolve-prompts)", title_justify="left")
        for name in ("id", "parent", "children", "measured", "mean improvement", "written at nodes"):
            table.add_column(name, justify="right")
        table.add_column("text")
        for s in memory.prompts:
            fit = s.improvement / s.children if s.children else 0.0
            parent = "-" if s.prompt.parent_id is None else str(s.prompt.parent_id)
            table.add_row(
                str(s.prompt.id),
                parent,
                str(s.children),
                str(s.measured),
                f"{fit:.4f}",
                str(s.prompt.written_at_nodes),
                first_words(s.prompt.text),
            )
        tables.append(table)
    return tables
