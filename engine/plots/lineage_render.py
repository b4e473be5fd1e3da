"""Drawing `LineageData` with matplotlib (Agg): PNG and SVG, each node with a tooltip in the SVG.

Colour is the node's own mean dev score (viridis, with a colour bar), the
marker's area grows with its number of dev evaluations; invalid nodes are grey
crosses, failed ones dark-red triangles, valid nodes not yet evaluated hollow
circles. The path from the root to the final node is drawn thick and red, the
final node ringed. In the SVG each node is a `<g id="clade-node-N">` whose
`<title>` ("node N: description, mean x, n evals") a browser shows on hover.
"""

from __future__ import annotations

import io
import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path

from engine.plots.lineage import LineageData, LineageNode
from engine.plots.output import plot_title
from engine.words import plural

PATH_COLOUR = "#d62728"
INVALID_COLOUR = "#8c8c8c"
FAILED_COLOUR = "#7f1d1d"
URL_PREFIX = "#clade-node-"
_SVG_NS = "http://www.w3.org/2000/svg"
_XLINK_NS = "http://www.w3.org/1999/xlink"
_NAMESPACES = {
    "": _SVG_NS,
    "xlink": _XLINK_NS,
    "dc": "http://purl.org/dc/elements/1.1/",
    "cc": "http://creativecommons.org/ns#",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
}


def _figure_size(data: LineageData) -> tuple[float, float, float]:
    """(width in, height in, points per x unit)."""
    xs = [n.x for n in data.nodes]
    span = (max(xs) - min(xs) + 1.0) if xs else 1.0
    depth = max((n.depth for n in data.nodes), default=0)
    width = min(max(0.45 * span + 2.0, 7.0), 40.0)
    height = min(max(0.75 * (depth + 1) + 2.0, 4.5), 24.0)
    return width, height, 72.0 * (width - 2.0) / span


def _sizes(nodes: list[LineageNode], unit_pt: float, n_max: int) -> list[float]:
    big = min(max(0.8 * unit_pt, 5.0), 26.0)
    small = max(2.5, big / 4.0)
    return [(small + (big - small) * math.sqrt(n.n_evals / n_max)) ** 2 if n_max else small**2 for n in nodes]


def _edges(ax, data: LineageData, by_id: dict[int, LineageNode]) -> None:
    from matplotlib.collections import LineCollection

    normal: list[list[tuple[float, float]]] = []
    faint: list[list[tuple[float, float]]] = []
    path: list[list[tuple[float, float]]] = []
    for parent, child in data.edges:
        p, c = by_id[parent], by_id[child]
        mid = p.y - 0.45
        line = [(p.x, p.y), (p.x, mid), (c.x, mid), (c.x, c.y)]
        if p.on_final_path and c.on_final_path:
            path.append(line)
        (faint if c.faded else normal).append(line)
    ax.add_collection(LineCollection(faint, colors="#b0b0b0", linewidths=0.4, alpha=0.35, zorder=1))
    ax.add_collection(LineCollection(normal, colors="#555555", linewidths=0.8, alpha=0.7, zorder=1))
    ax.add_collection(LineCollection(path, colors=PATH_COLOUR, linewidths=2.4, alpha=0.9, zorder=2))


def _scatter(ax, nodes: list[LineageNode], sizes: dict[int, float], urls: bool, **style):
    if not nodes:
        return None
    art = ax.scatter([n.x for n in nodes], [n.y for n in nodes], s=[sizes[n.id] for n in nodes], **style)
    if urls:
        art.set_urls([f"{URL_PREFIX}{n.id}" for n in nodes])
    return art


def _nodes(ax, nodes: list[LineageNode], sizes: dict[int, float], norm, cmap) -> None:
    """The markers: scored nodes coloured by mean, fresh ones hollow, invalid and failed ones apart."""
    scored = [n for n in nodes if n.status == "valid" and n.mean is not None]
    colours = [(*cmap(norm(n.mean))[:3], 0.25 if n.faded else 0.95) for n in scored]
    edges = [(0.2, 0.2, 0.2, 0.2 if n.faded else 0.8) for n in scored]
    _scatter(ax, scored, sizes, True, c=colours, edgecolors=edges, linewidths=0.4, zorder=3)
    fresh = [n for n in nodes if n.status == "valid" and n.mean is None]
    _scatter(
        ax,
        fresh,
        sizes,
        True,
        facecolors="white",
        edgecolors="#666666",
        linewidths=0.7,
        alpha=0.5 if len(nodes) > 150 else 1.0,
        zorder=3,
    )
    for status, marker, colour in (("invalid", "X", INVALID_COLOUR), ("failed", "v", FAILED_COLOUR)):
        group = [n for n in nodes if n.status == status]
        small = {n.id: max(sizes[n.id], 30.0 if len(nodes) <= 150 else 9.0) for n in group}
        _scatter(
            ax,
            group,
            small,
            True,
            marker=marker,
            c=colour,
            linewidths=0,
            alpha=0.35 if len(nodes) > 150 else 0.9,
            zorder=3,
        )


def _labels(ax, nodes: list[LineageNode], sizes: dict[int, float]) -> None:
    """The labelled nodes' ids (and means, in a large tree), beside their markers."""
    for n in nodes:
        if n.labelled:
            text = str(n.id) if len(nodes) <= 40 else f"#{n.id} {n.mean:.2f}" if n.mean is not None else f"#{n.id}"
            if n.is_final:
                text += " final"
            off = math.sqrt(sizes[n.id]) / 2.0 * 0.75 + 2.0
            ax.annotate(
                text,
                (n.x, n.y),
                xytext=(off, off),
                textcoords="offset points",
                fontsize=8,
                color=PATH_COLOUR if n.on_final_path else "#222222",
                zorder=5,
            )


def _legend(fig, ax, norm, cmap, width: float) -> None:
    """The colour bar of mean scores and the legend of markers, above the axes."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    fig.colorbar(plt.cm.ScalarMappable(norm=norm, cmap=cmap), ax=ax, shrink=0.8, pad=0.01, label="mean dev score (own)")
    handles = [
        Line2D([], [], marker="o", ls="", color=cmap(0.7), markeredgecolor="#333333", label="valid (size: dev evals)"),
        Line2D([], [], marker="o", ls="", color="white", markeredgecolor="#666666", label="valid, not evaluated"),
        Line2D([], [], marker="X", ls="", color=INVALID_COLOUR, label="invalid"),
        Line2D([], [], marker="v", ls="", color=FAILED_COLOUR, label="failed"),
        Line2D([], [], color=PATH_COLOUR, lw=2.4, marker="o", markerfacecolor="none", label="path to final node"),
    ]
    ax.legend(
        handles=handles,
        loc="lower left",
        bbox_to_anchor=(0.0, 1.0),
        ncol=5 if width >= 12 else 3,
        fontsize=8,
        frameon=False,
    )


def _frame(fig, ax, data: LineageData, final: LineageNode | None) -> None:
    """The title (run, counts, final node, fading) and the depth axis."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    nodes = data.nodes
    counts = {s: sum(1 for n in nodes if n.status == s) for s in ("valid", "invalid", "failed")}
    lines = [
        f"Lineage of {data.run_id}",
        f"{plural(len(nodes), 'node')} ({counts['valid']} valid, {counts['invalid']} invalid, "
        f"{counts['failed']} failed)",
    ]
    if final is not None:
        lines.append(f"final node {final.id}" + (f": {data.final_rule}" if data.final_rule else ""))
    if data.fade_below:
        lines.append(f"faded: invalid, failed, or fewer than {plural(data.fade_below, 'dev evaluation')}")
    fig.suptitle("\n".join(lines), fontsize=10, x=0.01, ha="left")
    xs = [n.x for n in nodes] or [0.0]
    ax.set_xlim(min(xs) - 1.0, max(xs) + 1.0)
    ax.set_ylim(min((n.y for n in nodes), default=0.0) - 0.6, 0.6)
    ax.set_xticks([])
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{abs(v):g}"))
    ax.set_ylabel("depth")
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)


def _draw(data: LineageData):
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    from matplotlib.colors import Normalize

    nodes = list(data.nodes)
    by_id = {n.id: n for n in nodes}
    width, height, unit_pt = _figure_size(data)
    fig, ax = plt.subplots(figsize=(width, height), layout="constrained")
    n_max = max((n.n_evals for n in nodes), default=0)
    sizes = dict(zip((n.id for n in nodes), _sizes(nodes, unit_pt, n_max)))
    _edges(ax, data, by_id)

    lo, hi = data.mean_range
    if hi - lo < 1e-9:
        lo, hi = lo - 0.05, hi + 0.05
    norm, cmap = Normalize(lo, hi), plt.get_cmap("viridis")
    _nodes(ax, nodes, sizes, norm, cmap)
    final = by_id.get(data.final_node) if data.final_node is not None else None
    if final is not None:
        ring = (math.sqrt(sizes[final.id]) + 8.0) ** 2
        ax.scatter([final.x], [final.y], s=[ring], facecolors="none", edgecolors=PATH_COLOUR, linewidths=2.0, zorder=4)
    _labels(ax, nodes, sizes)
    _legend(fig, ax, norm, cmap, width)
    _frame(fig, ax, data, final)
    return fig


def add_svg_titles(svg: bytes, hover: dict[int, str]) -> bytes:
    """Turn each node's `<a xlink:href="#clade-node-N">` into `<g id="clade-node-N"><title>…</title>…</g>`."""
    for prefix, uri in _NAMESPACES.items():
        ET.register_namespace(prefix, uri)
    root = ET.fromstring(svg)
    href = f"{{{_XLINK_NS}}}href"
    pattern = re.compile(re.escape(URL_PREFIX) + r"(\d+)$")
    for element in root.iter(f"{{{_SVG_NS}}}a"):
        found = pattern.match(element.get(href, ""))
        if not found:
            continue
        node = int(found.group(1))
        element.tag = f"{{{_SVG_NS}}}g"
        element.attrib.clear()
        element.set("id", f"clade-node-{node}")
        element.set("class", "clade-node")
        title = ET.Element(f"{{{_SVG_NS}}}title")
        title.text = hover.get(node, f"node {node}")
        element.insert(0, title)
    return b'<?xml version="1.0" encoding="utf-8" standalone="no"?>\n' + ET.tostring(root, encoding="utf-8")


def render_lineage(data: LineageData, outputs: Iterable[str | Path]) -> list[Path]:
    """Draw `data` once and write it to each output (.png or .svg, by suffix); returns the paths."""
    import matplotlib.pyplot as plt

    fig = _draw(data)
    written = []
    title = plot_title("lineage", data.run_id)
    try:
        for out in outputs:
            out = Path(out)
            fmt = out.suffix.lower().lstrip(".")
            if fmt == "svg":
                buffer = io.BytesIO()
                fig.savefig(buffer, format="svg", metadata={"Title": title, "Date": None})
                out.write_bytes(add_svg_titles(buffer.getvalue(), {n.id: n.hover for n in data.nodes}))
            elif fmt == "png":
                dpi = 120 if fig.get_figwidth() <= 16 else 90
                fig.savefig(out, format="png", dpi=dpi, metadata={"Title": title})
            else:
                raise ValueError(f"unknown plot format {out.suffix!r} (png or svg)")
            written.append(out)
    finally:
        plt.close(fig)
    return written
