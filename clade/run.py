"""A stored run as Python sees it: `clade.Run`, what `clade.search` returns and `clade.open_run` opens.

A Run holds no database connection between calls: each method opens the archive read-only, reads, and
closes it. So a Run never blocks a search that resumes the run, and a Run of a search still going reads
the search's live copy (archive/live.py) as of each call, or the archive itself once the search has ended.
The tables come back as pandas DataFrames when pandas is installed (`pip install 'clade-search[pandas]'`), else as
pyarrow Tables; either is imported only when a table is asked for.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.errors import UserError

if TYPE_CHECKING:
    from archive import Archive
    from archive.records import NodeStats
    from engine.config import RunConfig

Table = Any  # a pandas.DataFrame, or a pyarrow.Table where pandas is not installed


@dataclass(frozen=True)
class Node:
    """One node of a run's tree: its own numbers (holdout never counts in `dev_mean`) and its files."""

    id: int
    parent_id: int | None  # None for a root
    status: str  # 'valid', 'invalid', 'failed', ...: as the nodes table says
    dev_mean: float | None  # mean dev score over its own evaluations, every repeat counted; None before one
    dev_evaluations: int
    holdout_mean: float | None  # None unless it was measured on holdout (the final node is)
    description: str | None
    files: Mapping[str, str] = field(repr=False, compare=False)  # {path: text}: the agent's files

    @property
    def code(self) -> str:
        """The agent's code: its one file's text, or every file under a `# --- path` line, by path."""
        if len(self.files) == 1:
            return next(iter(self.files.values()))
        return "\n".join(f"# --- {path}\n{text}" for path, text in sorted(self.files.items()))


class Run:
    """One run's archive, read-only. `path` is the run's folder; use `clade.open_run` to make one."""

    def __init__(self, path: str | Path) -> None:
        """`path`: a run folder or its archive file; a missing path or no archive there: UserError."""
        self._closed = False
        self.archive_file = Path(path)  # the errors name the path as given
        with self._archive() as archive:
            self.archive_file = Path(archive.path).resolve()  # the archive itself, even while read live
            self.id: str = archive.run_id

    @property
    def path(self) -> Path:
        """The run's folder (what `clade runs show` and `clade.open_run` take)."""
        return self.archive_file.parent

    @property
    def config(self) -> RunConfig:
        """The run's configuration as last stored (a resume may have raised its budget)."""
        from engine.config import RunConfig

        with self._archive() as archive:
            return RunConfig.from_dict(archive.config())

    @property
    def status(self) -> str:
        """'finished', 'time_limit', 'interrupted'; 'running (live, as of 3 s ago)' while a search holds it;
        'stopped (killed?)' for a search that died without writing its end: as `clade runs show` says it."""
        from engine.runinfo.reading import shown_status

        with self._archive() as archive:
            return shown_status(str(archive.run_row().get("status", "")), archive.live_as_of)

    # ----- tables ----------------------------------------------------------------------------------------
    def nodes(self) -> Table:
        """The nodes table, one row per node in id order (the columns of `clade runs sql`)."""
        return self.table("nodes")

    def evaluations(self) -> Table:
        """The evaluations table: one row per (node, instance, repeat), dev and holdout."""
        return self.table("evaluations")

    def llm_calls(self) -> Table:
        """The llm_calls table: every model call with its tokens and cost (empty for an offline run)."""
        return self.table("llm_calls")

    def table(self, name: str) -> Table:
        """Any public table of the archive (runs, instances, nodes, node_files, evaluations,
        reference_evaluations, llm_calls, events, trajectory_steps, arena_proposals, recommendations, prompts),
        columns as stored: a pandas DataFrame when pandas is installed, else a pyarrow Table."""
        from archive.reads_tables import PUBLIC_TABLES

        if name not in PUBLIC_TABLES:
            raise UserError(f"{name!r} is not a table of the archive; one of {', '.join(PUBLIC_TABLES)}")
        with self._archive() as archive:
            arrow = archive.table_arrow(name)
        try:
            import pandas  # noqa: F401 - only whether it is there: pyarrow converts
        except ImportError:
            return arrow
        return arrow.to_pandas()

    # ----- nodes -----------------------------------------------------------------------------------------
    def best(self) -> Node:
        """The node to hand a user, by the rule `clade runs best` uses: the run's final node when it chose
        one (its last `select_final` event); else, for a run stopped before its end, the highest dev mean
        among nodes evaluated on every dev instance, or, when none is, among nodes with the most dev
        evaluations (ties to the older node); else the seed (node 0)."""
        from engine.runinfo.reading import best_mean, final_choice

        with self._archive() as archive:
            stats = archive.dev_node_stats()
            choice = final_choice(archive)
            if choice is not None:
                chosen = choice[0]
            else:
                most = max((s.n for s in stats.values()), default=0)
                found = best_mean(stats, min(most, max(archive.n_dev_instances(), 1)))
                chosen = found[0] if found else 0
            return _node(archive, chosen, stats)

    def lineage(self, node: int | Node) -> list[Node]:
        """The path from the root to `node` (a node id or a Node), both included: [root, ..., node]."""
        target = node.id if isinstance(node, Node) else int(node)
        with self._archive() as archive:
            parents = archive.node_parents()
            if target not in parents:
                raise UserError(f"run {self.id} has no node {target} (its nodes are 0 to {max(parents, default=0)})")
            path = [target]
            while (parent := parents[path[-1]]) is not None:
                path.append(parent)
            stats = archive.dev_node_stats()
            return [_node(archive, n, stats) for n in reversed(path)]

    # ----- a picture ------------------------------------------------------------------------------------
    def plot_lineage(self, out: str | Path | None = None, labels: int = 10) -> Path:
        """Draw the lineage tree as `clade plot lineage` does: lineage.png and lineage.svg in the run's folder
        (or the folder `out`); returns the PNG's path (in a notebook: `IPython.display.Image(run.plot_lineage())`).
        Needs the viz extra. A file of that name this did not draw is never replaced: UserError, as for any
        other mistake."""
        from archive import ArchiveError
        from engine.plots.lineage import lineage_data
        from engine.plots.output import PlotPathError, plan_outputs

        if self._closed:
            raise UserError(f"this run is closed; open it again with clade.open_run({str(self.path)!r})")
        try:
            from engine.plots.lineage_render import render_lineage

            planned = plan_outputs(Path(out) if out else self.path, "lineage", ["png", "svg"], "lineage", False)
            render_lineage(lineage_data(self.archive_file, max_labels=max(labels, 0)), [p for p, _ in planned])
        except (ArchiveError, PlotPathError) as exc:
            raise UserError(str(exc)) from None
        except ModuleNotFoundError as exc:
            if not exc.name or exc.name.split(".")[0] not in ("matplotlib", "PIL"):
                raise
            from engine.plots.output import needs_viz

            raise UserError(needs_viz()) from None
        return planned[0][0]

    # ----- its use ---------------------------------------------------------------------------------------
    def close(self) -> None:
        """End this Run's use (it holds no connection between calls; later calls raise UserError)."""
        self._closed = True

    def __enter__(self) -> Run:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Run({self.id!r}, path={str(self.path)!r})"

    @contextmanager
    def _archive(self) -> Iterator[Archive]:
        """The archive, opened read-only for one read (a running search's live copy while it runs)."""
        from archive import ArchiveError
        from engine.runinfo.reading import open_read_only

        if self._closed:
            raise UserError(f"this run is closed; open it again with clade.open_run({str(self.path)!r})")
        try:
            archive = open_read_only(self.archive_file)
        except ArchiveError as exc:
            raise UserError(str(exc)) from None
        try:
            yield archive
        finally:
            archive.close()


def _node(archive: Archive, node_id: int, stats: Mapping[int, NodeStats]) -> Node:
    record = archive.node(node_id)
    if record is None:
        raise UserError(f"{archive.path} has no node {node_id}")
    own = stats.get(node_id)
    return Node(
        id=record.id,
        parent_id=record.parent_id,
        status=record.status,
        dev_mean=own.mean if own else None,
        dev_evaluations=own.n if own else 0,
        holdout_mean=archive.holdout_mean(node_id)[0],
        description=record.description,
        files=archive.node_files(node_id),
    )
