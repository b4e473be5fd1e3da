"""The live page: `python -m engine.runs serve [RUN ...]` follows running searches in a browser.

A small Starlette app (needs the `live` extra: pip install -e '.[live]') that
lists runs with the columns of `runs list` and draws one run's tree, scores,
worker lanes and model spend, polled every ~2 s. It only reads: every request
opens the run's archive read-only (a running search's live copy, see
archive/live.py), reads and closes it, so it never holds a file the engine
replaces. What it draws is the HTML report's (engine/report): the tree SVG,
the node panel (panel.js) and its data (report.data.node_detail).

sources.py: which runs; view.py: what a page shows, read from archives;
charts.py: the SVG charts; page.py: the HTML shells; app.py: the routes;
auth.py: the token on every request, GET/HEAD only; access.py: when a token
is needed, HTTPS, the URL; server.py: the command (checks, port, uvicorn).
"""
