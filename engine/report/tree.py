"""The lineage tree of the report as inline SVG: root on top, one circle per node.

Colour: the node's mean dev score on a viridis scale spanning the run's lowest
to highest node mean (white: valid but not evaluated yet). Size: the number of
its dev evaluations. Invalid children are grey and dashed, failed ones pale
red and dashed, the final node has a gold ring. Every node is a
`<g class="node" data-id=N>` the page's script makes clickable; its
`<title>` is the hover text. The layout is engine/plots/layout.py's tidy tree.
"""

from __future__ import annotations

import math
from html import escape
from typing import Any

VIRIDIS = ("#440154", "#482878", "#3e4989", "#31688e", "#26828e", "#1f9e89", "#35b779", "#6ece58", "#b5de2b", "#fde725")
UNEVALUATED = "#ffffff"
STATUS_FILL = {"invalid": "#d0d0d0", "failed": "#f3c1bb"}
STATUS_STROKE = {"valid": "#333333", "invalid": "#8a8a8a", "failed": "#c0392b"}
FINAL_RING = "#e0a000"
MARGIN = 28
WIDE = 680  # px a small tree is spread to


def _mix(a: str, b: str, t: float) -> str:
    ca = [int(a[i : i + 2], 16) for i in (1, 3, 5)]
    cb = [int(b[i : i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * t):02x}" for x, y in zip(ca, cb))


def colour(value: float) -> str:
    """viridis at value in [0, 1]."""
    v = min(1.0, max(0.0, value)) * (len(VIRIDIS) - 1)
    i = min(int(v), len(VIRIDIS) - 2)
    return _mix(VIRIDIS[i], VIRIDIS[i + 1], v - i)


def mean_range(nodes: list[dict[str, Any]]) -> tuple[float, float]:
    means = [n["mean"] for n in nodes if n["mean"] is not None]
    if not means:
        return 0.0, 1.0
    lo, hi = min(means), max(means)
    return (lo, hi) if hi - lo > 1e-9 else (max(0.0, lo - 0.05), min(1.0, hi + 0.05))


def _dark(fill: str) -> bool:
    r, g, b = (int(fill[i : i + 2], 16) for i in (1, 3, 5))
    return 0.299 * r + 0.587 * g + 0.114 * b < 140


def path_to(nodes: list[dict[str, Any]], node: int | None) -> set[int]:
    """`node` and its ancestors up to the root (empty for None): the final path the live page highlights."""
    parent = {n["id"]: n["parent"] for n in nodes}
    out: set[int] = set()
    while node is not None and node in parent and node not in out:
        out.add(node)
        node = parent[node]
    return out


def _fill(n: dict[str, Any], lo: float, hi: float) -> str:
    """A node's colour: its mean on the run's scale, white if not evaluated, grey or pale red if it is not valid."""
    if n["status"] == "valid":
        return UNEVALUATED if n["mean"] is None else colour((n["mean"] - lo) / (hi - lo))
    return STATUS_FILL.get(n["status"], "#d0d0d0")


def _node_svg(n: dict[str, Any], xy: tuple[float, float], r: float, fill: str, final: bool, labelled: bool) -> str:
    """One node's `<g class="node">`: its hover title, the final node's ring, its circle and (labelled) its id."""
    status = n["status"]
    stroke = STATUS_STROKE.get(status, "#333333")
    dash = ' stroke-dasharray="3 2"' if status != "valid" else ""
    mean = "not evaluated" if n["mean"] is None else f"mean dev score {n['mean']:.3f} over {n['n_dev']}"
    hover = f"#{n['id']} {status}: {mean}; {n['description'][:120]}"
    ring = (
        f'<circle class="final-ring" r="{r + 4}" fill="none" stroke="{FINAL_RING}" stroke-width="3"/>' if final else ""
    )
    label = ""
    if labelled:
        ink = "#ffffff" if _dark(fill) else "#111111"
        label = f'<text dy="3.5" fill="{ink}">{n["id"]}</text>'
    x, y = xy
    return (
        f'<g class="node {status}" data-id="{n["id"]}" transform="translate({x},{y})" tabindex="0" '
        f'role="button" aria-label="node {n["id"]}"><title>{escape(hover)}</title>{ring}'
        f'<circle class="dot" r="{r}" fill="{fill}" stroke="{stroke}" stroke-width="1.5"{dash}/>{label}</g>'
    )


def render_tree(nodes: list[dict[str, Any]], final: int | None, path: set[int] | frozenset = frozenset()) -> str:
    """The tree as one `<svg id="tree">` element (no external references); the edges into the nodes of
    `path` (see path_to) are drawn thick and gold."""
    from engine.plots.layout import tidy_tree

    if not nodes:
        return '<svg id="tree" width="200" height="60"><text x="10" y="30">no nodes yet</text></svg>'
    big = len(nodes) > 300
    small = len(nodes) <= 60
    x_step, y_step, r_max = (20.0, 56.0, 9.0) if big else (46.0, 84.0, 18.0) if small else (36.0, 72.0, 16.0)
    r_base, r_step = (4.0, 1.4) if big else (8.0, 2.5) if small else (6.0, 2.2)
    pos = tidy_tree({n["id"]: n["parent"] for n in nodes})
    lo, hi = mean_range(nodes)
    xs = [p[0] for p in pos.values()]
    depth = max(-p[1] for p in pos.values())
    x0 = min(xs)
    if max(xs) > x0:  # a small tree spreads out to a readable width (up to 90 px between leaves)
        x_step = max(x_step, min(90.0, (WIDE - 2 * MARGIN) / (max(xs) - x0)))
    width = int((max(xs) - x0) * x_step + 2 * MARGIN)
    height = int(depth * y_step + 2 * MARGIN)

    def at(node: int) -> tuple[float, float]:
        x, y = pos[node]
        return round(MARGIN + (x - x0) * x_step, 1), round(MARGIN - y * y_step, 1)

    # the path's edges last: drawn over the grey ones they share
    edges: list[str] = []
    on_path: list[str] = []
    circles: list[str] = []
    for n in nodes:
        x, y = at(n["id"])
        if n["parent"] is not None and n["parent"] in pos:
            px, py = at(n["parent"])
            mid = round((py + y) / 2, 1)
            dash = ' stroke-dasharray="4 3"' if n["status"] != "valid" else ""
            on = f' class="path" stroke="{FINAL_RING}" stroke-width="3.5"' if n["id"] in path else ""
            (on_path if on else edges).append(f'<path d="M{px} {py}V{mid}H{x}V{y}"{dash}{on}/>')
        r = round(min(r_max, r_base + r_step * math.sqrt(n["n_dev"])), 1)
        circles.append(_node_svg(n, (x, y), r, _fill(n, lo, hi), n["id"] == final, not big))
    return (
        f'<svg id="tree" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="lineage tree, root on top">'
        f'<g class="edges" fill="none" stroke="#9a9a9a" stroke-width="1.2">{"".join(edges + on_path)}</g>'
        f'<g class="nodes">{"".join(circles)}</g></svg>'
    )


def legend_html(nodes: list[dict[str, Any]]) -> str:
    """The colour scale and the marks, as HTML (a CSS gradient: no image, no URL)."""
    lo, hi = mean_range(nodes)
    stops = ", ".join(VIRIDIS)
    return (
        '<div class="legend">'
        f'<span class="scale"><span class="lab">{lo:.3f}</span><span class="bar" '
        f'style="background: linear-gradient(to right, {stops})"></span><span class="lab">{hi:.3f}</span> '
        "mean dev score</span>"
        f'<span><i class="sw" style="background:{UNEVALUATED}"></i>not evaluated</span>'
        f'<span><i class="sw dashed" style="background:{STATUS_FILL["invalid"]}"></i>invalid</span>'
        f'<span><i class="sw dashed red" style="background:{STATUS_FILL["failed"]}"></i>failed</span>'
        f'<span><i class="sw ring" style="border-color:{FINAL_RING}"></i>final node</span>'
        "<span>size: dev evaluations</span>"
        '<span class="zoom">zoom <button type="button" data-zoom="out" title="smaller">−</button>'
        '<button type="button" data-zoom="in" title="larger">+</button>'
        '<button type="button" data-zoom="fit" title="the whole tree in the width of the pane">fit</button>'
        '<button type="button" data-zoom="1" title="natural size">1:1</button></span>'
        "</div>"
    )
