"""The report as one HTML file: header and tree rendered here, the data embedded as JSON, inline CSS and JS.

Nothing is fetched: no CDN, no font, no image, no URL in any src or href.
Every text from the archive is escaped: in the HTML by `html.escape`, in
the embedded JSON by writing `<`, `>` and `&` as \\u escapes (so an agent
that printed `</script>` cannot end the script element), and the page's
script puts archive text into the page only through `textContent`.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from engine.report.memory import memory_html
from engine.report.tree import legend_html, render_tree
from engine.words import plural, plural_word

_HERE = Path(__file__).resolve().parent
STATIC = _HERE  # report.css and the scripts, also served as files by the live page (engine/live)
SCRIPTS = ("panel.js", "report.js")  # panel.js: the node panel and zoom, shared with the live page


def embed_json(data: Any) -> str:
    """JSON safe inside <script type="application/json">: no '<', '>' or '&' left as such."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str)
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _num(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def _cards(data: dict[str, Any]) -> str:
    run, spend, nodes = data["run"], data["spend"], data["nodes"]
    dev = sum(e["n"] for e in spend["evaluations"] if e["split"] == "dev")
    holdout = sum(e["n"] for e in spend["evaluations"] if e["split"] == "holdout")
    bad = sum(e["n"] for e in spend["evaluations"] if e["status"] != "ok")
    by_status = {s: sum(1 for n in nodes if n["status"] == s) for s in ("valid", "invalid", "failed")}
    llm = spend["llm"]
    cost = f"${llm['cost_usd']:,.4f}" + (f" (+{llm['unpriced']} unpriced)" if llm["unpriced"] else "")
    final = data["final"]
    final_text = "none yet" if final is None else f"#{final['node']}"
    final_rule = "" if final is None else final["rule"]
    budget = run.get("budget")
    cards = [
        (
            "Dev evaluations",
            f"{dev:,}" + (f" / {budget:,}" if isinstance(budget, int) else ""),
            f"{holdout:,} holdout, {spend['references']['n']:,} reference runs; {bad:,} not ok",
        ),
        (
            "Nodes",
            f"{len(nodes):,}",
            f"{by_status['valid']} valid, {by_status['invalid']} invalid, {by_status['failed']} failed",
        ),
        ("Sandbox time", f"{_num(spend['sandbox_s'], 1)} s", f"wall {_num(run.get('wall_s'), 1)} s"),
        (
            "LLM spend",
            cost,
            (
                f"{llm['calls']:,} {plural_word(llm['calls'], 'call')} ({llm['errors']} failed), "
                f"{llm['tokens_in']:,} {plural_word(llm['tokens_in'], 'token')} in, "
                f"{llm['tokens_out']:,} out"
            ),
        ),
        ("Final node", final_text, final_rule),
    ]
    return "".join(
        f'<div class="card"><div class="k">{escape(k)}</div><div class="v">{escape(v)}</div>'
        f'<div class="s">{escape(s)}</div></div>'
        for k, v, s in cards
    )


def _config_table(config: dict[str, Any]) -> str:
    rows = "".join(
        f"<tr><th>{escape(str(k))}</th><td>{escape('—' if v is None else str(v))}</td></tr>" for k, v in config.items()
    )
    return f'<table class="config">{rows}</table>'


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def _arena_html(data: dict[str, Any]) -> str:
    """An arena run: every code agent's scores on the original dev set, the evolved one and holdout; testers'."""
    arena = data.get("arena")
    if not arena:
        return ""
    counts = arena["instances"]
    agents = "".join(
        f"<tr><td>{n['id']}</td><td>{escape(n['status'])}</td><td>{_pct(n['arena']['original'])}</td>"
        f"<td>{_pct(n['arena']['evolved'])}</td><td>{_pct(n['arena']['holdout'])}</td></tr>"
        for n in data["nodes"]
        if n.get("role") == "agent"
    )
    testers = "".join(
        f"<tr><td>{n['id']}</td><td>{escape(n['status'])}</td><td>{_pct(n['arena']['tester'])}</td></tr>"
        for n in data["nodes"]
        if n.get("role") == "tester"
    )
    return (
        f'<details class="cfg arena" open><summary>Arena ({escape(str(arena["mode"]))}): '
        f"{plural(len(arena['rounds']), 'round')}; dev set {counts['task']} original + {counts['arena']} confirmed "
        f"tests from testers; holdout {counts['holdout']} (fixed)</summary>"
        '<table class="config arena-agents"><tr><th>code agent</th><th>status</th><th>original dev set</th>'
        f"<th>evolved dev set</th><th>holdout</th></tr>{agents}</table>"
        '<table class="config arena-testers"><tr><th>tester</th><th>status</th>'
        f"<th>mean share of agents broken</th></tr>{testers}</table></details>"
    )


def _workers_html(data: dict[str, Any]) -> str:
    """Evaluations per worker over time, as inline SVG (no asset): shows whether every worker kept busy."""
    part = data.get("workers")
    if not part or not part["rows"]:
        return ""
    label_w, bar_w, row_h, total_w = 210, 16, 18, 60
    peak = max((c for r in part["rows"] for c in r["counts"]), default=0) or 1
    edges = part["edges"]
    width = label_w + bar_w * part["buckets"] + total_w
    height = row_h * len(part["rows"]) + 16
    out = []
    for i, row in enumerate(part["rows"]):
        y = i * row_h
        name = row["worker"] or "—"
        short = name if len(name) <= 30 else name[:29] + "…"
        out.append(f'<text x="0" y="{y + 13}"><title>{escape(name)}</title>{escape(short)}</text>')
        out.append(f'<line x1="{label_w}" x2="{width - total_w}" y1="{y + row_h - 1.5}" y2="{y + row_h - 1.5}"/>')
        for b, count in enumerate(row["counts"]):
            if count:
                h = max(1.0, (row_h - 4) * count / peak)
                when = f"{edges[b]} → {edges[b + 1]}" if edges else ""
                out.append(
                    f'<rect x="{label_w + b * bar_w}" y="{y + row_h - 2 - h:.1f}" width="{bar_w - 2}" '
                    f'height="{h:.1f}"><title>{count} ({escape(when)})</title></rect>'
                )
        out.append(f'<text class="total" x="{width}" y="{y + 13}">{row["total"]:,}</text>')
    if edges:
        y = height - 3
        out.append(
            f'<text class="axis" x="{label_w}" y="{y}">{escape(edges[0])}</text>'
            f'<text class="axis end" x="{width - total_w}" y="{y}">{escape(edges[-1])}</text>'
        )
    return (
        f'<details class="cfg workers" open><summary>Evaluations per worker over time '
        f"({plural(len(part['rows']), 'worker')}; bars by finished_at, total at the right)</summary>"
        f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="Evaluations per worker over time">{"".join(out)}</svg></details>'
    )


def _subtitle(run: dict[str, Any]) -> str:
    """The line under the title: status, task, policy, budget, seed, times, schema."""
    return " · ".join(
        str(x)
        for x in (
            f"status {run['status']}" + (f" ({run['stop_reason']})" if run.get("stop_reason") else ""),
            f"task {run.get('task')}",
            f"policy {run.get('policy')}",
            f"budget {run.get('budget')}",
            f"seed {run['seed']}",
            f"{run['created_at']} → {run['updated_at']}",
            f"schema {run['schema_version']}",
        )
        if x
    )


def render_page(data: dict[str, Any]) -> str:
    run = data["run"]
    final = data["final"]["node"] if data["final"] else None
    title = f"Clade report: {run['id']}"
    subtitle = _subtitle(run)
    clipped = (
        f'<p class="note">{data["clipped"]:,} long texts were cut to keep this file small; '
        "the archive holds them whole.</p>"
        if data["clipped"]
        else ""
    )
    css = (_HERE / "report.css").read_text()
    js = "\n".join((_HERE / name).read_text() for name in SCRIPTS)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title>
<style>
{css}
</style>
</head>
<body>
<header>
<h1>{escape(title)}</h1>
<p class="sub">{escape(subtitle)}</p>
<div class="cards">{_cards(data)}</div>
<details class="cfg"><summary>Run config</summary>{_config_table(run["config"])}</details>
{_workers_html(data)}
{_arena_html(data)}
{memory_html(data.get("prompt_memory"))}
{clipped}
</header>
<main>
<section id="tree-pane">
{legend_html(data["nodes"])}
<div id="tree-scroll">{render_tree(data["nodes"], final)}</div>
</section>
<aside id="panel" aria-live="polite"><p class="hint">Click a node of the tree to see its change against its
parent, its score on each instance, its agents' steps, the model's prompt and answer, and its evaluation logs.</p></aside>
</main>
<script type="application/json" id="clade-data">{embed_json(data)}</script>
<script>
{js}
</script>
</body>
</html>
"""
