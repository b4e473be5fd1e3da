"""The live page's two HTML shells (index, run). They hold no data: live.js fills them from the JSON routes
and keeps them current, so a page loaded before a search moves on is never stale. Only local /static/ files
are referenced (no CDN: pages here may have no internet)."""

from __future__ import annotations

from html import escape

_HEAD = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="stylesheet" href="/static/report.css">
<link rel="stylesheet" href="/static/live.css">
</head>
"""


def index_html() -> str:
    return (
        _HEAD.format(title="Clade runs")
        + """<body data-page="index">
<header>
<h1>Clade runs</h1>
<p class="sub" id="sources"></p>
<p class="sub"><span id="freshness">loading…</span></p>
</header>
<main class="index"><table id="runs" class="runs"></table><p id="empty" class="empty" hidden></p></main>
<script src="/static/live.js"></script>
</body>
</html>
"""
    )


def run_html(name: str) -> str:
    title = f"Clade live: {name}"
    return (
        _HEAD.format(title=escape(title))
        + f"""<body data-page="run" data-run="{escape(name)}">
<header>
<p class="sub"><a href="/">← all runs</a></p>
<h1>{escape(title)}</h1>
<p class="sub"><span id="state" class="state">loading…</span> · <span id="freshness"></span></p>
<div class="cards">
<div class="card"><div class="k">Dev evaluations</div><div class="v"><span id="eval-count">—</span><span id="budget"></span></div><div class="s" id="eval-note"></div></div>
<div class="card"><div class="k">Nodes</div><div class="v" id="node-count">—</div><div class="s" id="node-note"></div></div>
<div class="card"><div class="k">Best mean</div><div class="v" id="best">—</div><div class="s">among nodes with every dev instance</div></div>
<div class="card"><div class="k">Final node</div><div class="v" id="final">—</div><div class="s" id="final-note"></div></div>
<div class="card"><div class="k">LLM spend</div><div class="v" id="cost">—</div><div class="s" id="tokens"></div></div>
</div>
<p class="note" id="message" hidden></p>
<section id="human" class="human" hidden>
<h2>The human mutator asks: <span id="human-key"></span></h2>
<pre id="human-prompt"></pre>
<form id="human-form">
<label for="human-answer">Your answer: SEARCH/REPLACE blocks or the whole file, as a model would answer</label>
<textarea id="human-answer" rows="16" spellcheck="false"></textarea>
<button type="submit">Send the answer</button> <span id="human-status"></span>
</form>
</section>
<div class="charts">
<details class="cfg" open><summary>Score over evaluations (dots: each dev evaluation; gold: best mean so far)</summary><div id="scores"></div></details>
<details class="cfg" open><summary>Worker lanes (one bar per evaluation, start to end, coloured by score)</summary><div id="lanes"></div></details>
<details class="cfg" open><summary>Model calls, tokens and cost by purpose</summary><div id="calls"></div></details>
<div id="memory"></div>
</div>
</header>
<main>
<section id="tree-pane">
<div id="legend"></div>
<div id="tree-scroll"></div>
</section>
<aside id="panel" aria-live="polite"><p class="hint">Click a node of the tree to see its change against its
parent, its score on each instance, the model's prompt and answer, and its evaluation logs and feedback. The gold
path leads to the final node (while the search runs: the best node so far).</p></aside>
</main>
<script src="/static/panel.js"></script>
<script src="/static/live.js"></script>
</body>
</html>
"""
    )


def not_found_html(message: str) -> str:
    return (
        _HEAD.format(title="Clade: not found")
        + f"""<body>
<header><p class="sub"><a href="/">← all runs</a></p><h1>Not found</h1><p class="sub">{escape(message)}</p></header>
</body>
</html>
"""
    )
