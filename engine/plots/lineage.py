"""The lineage tree of a run, as data: what `render_lineage` draws (Optuna's "info" half).

`lineage_data(path)` is a pure function of the archive: each node with its
parent, depth, status, own mean dev score and number of dev evaluations, its
mutation's description, its place in a tidy layout (root on top), whether it
is the final node or on the path to it, and whether the plot fades it or
writes its label. Tests check this; the renderer only draws it.

Large trees stay readable: above `FADE_ABOVE` nodes, a node with fewer dev
evaluations than the tree's median (at least 2), or that is invalid or failed,
is faded and, as a leaf, takes a narrower slot; labels go only to the final
path and the `max_labels` best nodes among those not faded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from archive.records import NodeStats
from engine.plots.layout import path_to_root, tidy_tree
from engine.runinfo.reading import final_choice, open_read_only

FADE_ABOVE = 150  # nodes: above this, small nodes fade and their leaves shrink
LABEL_ALL_UPTO = 40  # nodes: up to this, every node carries its id
FADED_LEAF_WIDTH = 0.3


@dataclass(frozen=True)
class LineageNode:
    id: int
    parent: int | None
    depth: int
    status: str  # 'valid' | 'invalid' | 'failed'
    mean: float | None  # own mean dev score; None without dev evaluations
    n_evals: int  # dev evaluations
    n_failed_evals: int  # dev evaluations whose status is not 'ok'
    description: str  # what the mutation did (plus the reason, for an invalid or failed node)
    x: float
    y: float  # minus the depth: the root is on top
    is_final: bool
    on_final_path: bool  # the root, the final node and every node between
    faded: bool
    labelled: bool

    @property
    def hover(self) -> str:
        """The SVG tooltip: "node N: description, mean x, n evals"."""
        kind = "" if self.status == "valid" else f" ({self.status})"
        mean = "no mean" if self.mean is None else f"mean {self.mean:.3f}"
        final = ", final node" if self.is_final else ""
        return f"node {self.id}{kind}: {self.description or '-'}, {mean}, {self.n_evals} evals{final}"


@dataclass(frozen=True)
class LineageData:
    run_id: str
    nodes: tuple[LineageNode, ...]  # in id order
    edges: tuple[tuple[int, int], ...]  # (parent, child)
    final_node: int | None
    final_rule: str
    n_dev_instances: int
    fade_below: int  # dev evaluations under which a node is faded (0: nothing is faded)

    @property
    def mean_range(self) -> tuple[float, float]:
        means = [n.mean for n in self.nodes if n.mean is not None]
        return (min(means), max(means)) if means else (0.0, 1.0)

    def node(self, node_id: int) -> LineageNode:
        return next(n for n in self.nodes if n.id == node_id)


def _median(values: list[int]) -> float:
    values = sorted(values)
    if not values:
        return 0.0
    mid = len(values) // 2
    return float(values[mid]) if len(values) % 2 else (values[mid - 1] + values[mid]) / 2.0


def _shown(
    rows: list[tuple], stats: dict[int, NodeStats], final: int | None, max_labels: int
) -> tuple[set[int], set[int], set[int], int]:
    """(nodes on the final path, faded nodes, labelled nodes, the evaluations under which a node fades)."""
    parents = {r[0]: r[1] for r in rows}
    on_path = set(path_to_root(parents, final)) if final is not None else set()
    large = len(rows) > FADE_ABOVE
    fade_below = max(2, math.ceil(_median([s.n for s in stats.values() if s.n > 0]))) if large else 0

    def n_of(node: int) -> int:
        s = stats.get(node)
        return s.n if s else 0

    status = {r[0]: r[3] for r in rows}
    faded = {n for n in parents if large and n not in on_path and (status[n] != "valid" or n_of(n) < fade_below)}
    if len(rows) <= LABEL_ALL_UPTO:
        return on_path, faded, set(parents), fade_below
    ranked = sorted(
        (n for n in parents if n not in faded and stats.get(n) and stats[n].mean is not None),
        key=lambda n: (-(stats[n].mean or 0.0), n),  # every mean here is a number: the filter above
    )
    return on_path, faded, on_path | set(ranked[:max_labels]), fade_below


def lineage_data(path: str | Path, max_labels: int = 10) -> LineageData:
    """The lineage tree of the run at `path` (a run folder or its archive file), read-only."""
    with open_read_only(path) as archive:
        rows = archive.node_outlines()
        stats = archive.dev_node_stats()
        choice = final_choice(archive)
        n_dev = archive.n_dev_instances()
        run_id = archive.run_id
    parents = {r[0]: r[1] for r in rows}
    final = choice[0] if choice and choice[0] in parents else None
    on_path, faded, labelled, fade_below = _shown(rows, stats, final, max_labels)
    large = len(rows) > FADE_ABOVE
    pos = tidy_tree(parents, (lambda n: FADED_LEAF_WIDTH if n in faded else 1.0) if large else None)
    nodes = []
    for node_id, parent, depth, st, description, reason in rows:
        s = stats.get(node_id)
        text = description if not reason else (f"{description} [{reason}]" if description else reason)
        nodes.append(
            LineageNode(
                id=node_id,
                parent=parent,
                depth=depth,
                status=st,
                mean=s.mean if s else None,
                n_evals=s.n if s else 0,
                n_failed_evals=s.n_failed if s else 0,
                description=" ".join(text.split()),
                x=pos[node_id][0],
                y=pos[node_id][1],
                is_final=node_id == final,
                on_final_path=node_id in on_path,
                faded=node_id in faded,
                labelled=node_id in labelled,
            )
        )
    edges = tuple((p, n) for n, p in parents.items() if p is not None and p in parents)
    return LineageData(
        run_id=run_id,
        nodes=tuple(nodes),
        edges=edges,
        final_node=final,
        final_rule=choice[1] if choice and final is not None else "",
        n_dev_instances=n_dev,
        fade_below=fade_below,
    )
