"""The live page's charts as inline SVG and HTML strings, drawn on the server like the report's tree (no
charting library, no asset, no network). Pure: plain lists in, markup out; every text escaped."""

from __future__ import annotations

from datetime import datetime
from html import escape

from engine.report.tree import colour

FAILED = "#c0392b"
BEST = "#e0a000"


def _empty(text: str) -> str:
    return f'<p class="empty">{escape(text)}</p>'


def score_chart(
    scores: list[tuple[float, int, str]], best: list[float | None], width: int = 560, height: int = 200
) -> str:
    """Each dev evaluation's score (a dot: score, node, instance) in the order they finished, and the best
    mean so far among nodes evaluated on every dev instance (a gold step line)."""
    if not scores:
        return _empty("no dev evaluation yet")
    left, right, top, bottom = 34, 10, 10, 24
    w, h = width - left - right, height - top - bottom
    n = len(scores)

    def x(i: int) -> float:
        return round(left + (i + 0.5) * w / n, 1)

    def y(v: float) -> float:
        return round(top + (1 - min(1.0, max(0.0, v))) * h, 1)

    out = [
        f'<line class="axis" x1="{left}" x2="{left + w}" y1="{y(v)}" y2="{y(v)}"/>'
        f'<text class="axis end" x="{left - 4}" y="{y(v) + 3}">{v:.1f}</text>'
        for v in (0.0, 0.5, 1.0)
    ]
    out.append(
        f'<text class="axis" x="{left}" y="{height - 6}">1</text>'
        f'<text class="axis end" x="{left + w}" y="{height - 6}">{n:,} dev evaluations</text>'
    )
    for i, (score, node, instance) in enumerate(scores):
        out.append(
            f'<circle cx="{x(i)}" cy="{y(score)}" r="2.2"><title>#{i + 1}: node {node} on '
            f"{escape(str(instance))}, score {score:.3f}</title></circle>"
        )
    points = [(x(i), y(b)) for i, b in enumerate(best) if b is not None]
    if points:
        steps = [f"M{points[0][0]} {points[0][1]}"] + [f"H{px}V{py}" for px, py in points[1:]]
        out.append(f'<path class="best" d="{"".join(steps)}"><title>best mean so far: {best[-1]:.3f}</title></path>')
    return (
        f'<svg class="chart score" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="score over evaluations">{"".join(out)}</svg>'
    )


def best_so_far(evals: list[tuple[int, float]], n_dev: int) -> list[float | None]:
    """After each dev evaluation (node, score, in finishing order): the highest mean among nodes with at
    least `n_dev` dev evaluations so far (reading.best_mean's rule, as it stood then), or None."""
    need = max(n_dev, 1)
    sums: dict[int, tuple[float, int]] = {}
    leader, best = None, None
    out: list[float | None] = []
    for node, score in evals:
        s, k = sums.get(node, (0.0, 0))
        sums[node] = (s + score, k + 1)
        if k + 1 >= need:
            mean = (s + score) / (k + 1)
            if best is None or mean > best:
                leader, best = node, mean
            elif node == leader:  # the leader fell: the best is now whoever qualified leads
                leader, best = max(((n, a / b) for n, (a, b) in sums.items() if b >= need), key=lambda p: p[1])
        out.append(best)
    return out


def worker_lanes(
    rows: list[tuple[str, datetime | None, datetime | None, float | None, str, int, str]],
    now: datetime | None = None,
    width: int = 760,
) -> str:
    """One lane per worker, one bar per evaluation from its start to its end (still running: to `now`),
    coloured by score (viridis, red when it did not end ok): whether every worker keeps busy.
    rows: (worker, started_at, finished_at, score, status, node, instance)."""
    timed = [
        (wk, start, end, score, st, node, inst) for wk, start, end, score, st, node, inst in rows if start is not None
    ]
    if not timed:
        return _empty("no evaluation with a start time yet")
    first = min(r[1] for r in timed)
    last = max([r[2] or r[1] for r in timed] + ([now] if now is not None and any(r[2] is None for r in timed) else []))
    span = max((last - first).total_seconds(), 1e-3)
    workers = sorted({r[0] or "" for r in timed})
    label_w, lane_h = 150, 16
    w = width - label_w - 10
    height = lane_h * len(workers) + 22
    out = []
    for i, worker in enumerate(workers):
        name = worker or "—"
        short = name if len(name) <= 22 else name[:21] + "…"
        out.append(
            f'<text x="0" y="{i * lane_h + 12}"><title>{escape(name)}</title>{escape(short)}</text>'
            f'<line x1="{label_w}" x2="{width - 10}" y1="{i * lane_h + lane_h - 1}" '
            f'y2="{i * lane_h + lane_h - 1}"/>'
        )
    lane = {wk: i for i, wk in enumerate(workers)}
    for worker, start, end, score, status, node, instance in timed:
        stop = end or now or start
        x0 = label_w + (start - first).total_seconds() / span * w
        x1 = label_w + (stop - first).total_seconds() / span * w
        fill = FAILED if status != "ok" else "#bbbbbb" if score is None else colour(score)
        secs = (stop - start).total_seconds()
        out.append(
            f'<rect x="{x0:.1f}" y="{lane[worker or ""] * lane_h + 2}" width="{max(1.5, x1 - x0):.1f}" '
            f'height="{lane_h - 5}" fill="{fill}"><title>node {node} on {escape(str(instance))}: '
            f"{escape(status)}, score {'—' if score is None else f'{score:.3f}'}, {secs:.1f} s</title></rect>"
        )
    y = height - 6
    out.append(
        f'<text class="axis" x="{label_w}" y="{y}">{first:%H:%M:%S}</text>'
        f'<text class="axis end" x="{width - 10}" y="{y}">{last:%H:%M:%S} ({span:,.0f} s)</text>'
    )
    return (
        f'<svg class="chart lanes" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="evaluations per worker over time">{"".join(out)}</svg>'
    )


def purpose_table(rows: list[tuple[str, int, int, int, int, float, int]]) -> str:
    """Model calls, tokens and dollars by purpose (mutate, retry, an agent's own calls...), with a bar of each
    purpose's share of the tokens. rows: (purpose, calls, failed, tokens_in, tokens_out, cost, unpriced)."""
    if not rows:
        return _empty("no model calls (the offline mutator makes children without a model)")
    peak = max(t_in + t_out for _, _, _, t_in, t_out, _, _ in rows) or 1
    body = []
    for purpose, calls, failed, t_in, t_out, cost, unpriced in rows:
        bar = round(100 * (t_in + t_out) / peak)
        price = f"${cost:,.4f}" + (f" (+{unpriced} unpriced)" if unpriced else "")
        body.append(
            f"<tr><td>{escape(str(purpose))}</td><td>{calls:,}</td><td>{failed:,}</td><td>{t_in:,}</td>"
            f"<td>{t_out:,}</td><td>{escape(price)}</td>"
            f'<td class="bar"><span style="width:{bar}px"></span></td></tr>'
        )
    return (
        '<table class="purposes"><tr><th>purpose</th><th>calls</th><th>failed</th><th>tokens in</th>'
        f"<th>tokens out</th><th>cost</th><th>tokens</th></tr>{''.join(body)}</table>"
    )
