"""The live page's routes (Starlette): two HTML shells, three JSON endpoints, a few static files.

The endpoints are plain (sync) functions: Starlette runs them in its thread pool, so a slow read of one
archive does not stall other requests; each opens, reads and closes its archive (engine/live/view.py).
"""

from __future__ import annotations

from pathlib import Path

from engine.live import page, view
from engine.live.sources import Sources

STATIC = Path(__file__).resolve().parent / "static"


def _static_files() -> dict[str, tuple[Path, str]]:
    from engine.report.page import STATIC as REPORT

    js, css = "text/javascript; charset=utf-8", "text/css; charset=utf-8"
    return {
        "live.js": (STATIC / "live.js", js),
        "live.css": (STATIC / "live.css", css),
        "panel.js": (REPORT / "panel.js", js),
        "report.css": (REPORT / "report.css", css),
    }


def build_app(sources: Sources):
    """The Starlette app serving the runs under `sources`."""
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.gzip import GZipMiddleware
    from starlette.responses import HTMLResponse, JSONResponse, Response
    from starlette.routing import Route

    files = _static_files()

    def no_run(name: str, as_json: bool):
        message = f"no run named {name!r} here (the runs are under {', '.join(map(str, sources.paths))})"
        return JSONResponse({"error": message}, 404) if as_json else HTMLResponse(page.not_found_html(message), 404)

    def index(request):
        return HTMLResponse(page.index_html())

    def runs(request):
        return JSONResponse(view.index_rows(sources))

    def run_page(request):
        name = request.path_params["name"]
        return HTMLResponse(page.run_html(name)) if sources.find(name) else no_run(name, False)

    def run_data(request):
        name = request.path_params["name"]
        folder = sources.find(name)
        if folder is None:
            return no_run(name, True)
        return JSONResponse(view.run_view(folder, request.query_params.get("since")))

    def node_data(request):
        name, node = request.path_params["name"], request.path_params["node"]
        folder = sources.find(name)
        if folder is None:
            return no_run(name, True)
        try:
            found = view.node_view(folder, node)
        except view.ArchiveLocked:
            return JSONResponse({"error": f"{name} is {view.LOCKED}"}, 503)
        if found is None:
            return JSONResponse({"error": f"run {name} has no node {node}"}, 404)
        return JSONResponse(found)

    def static(request):
        found = files.get(request.path_params["file"])
        if found is None:
            return Response("not found", 404, media_type="text/plain")
        return Response(found[0].read_bytes(), media_type=found[1], headers={"Cache-Control": "no-cache"})

    # gzip: a big run's tree and charts are a few MB of markup per change, a tenth of that compressed
    return Starlette(
        middleware=[Middleware(GZipMiddleware, minimum_size=4096)],
        routes=[
            Route("/", index),
            Route("/api/runs", runs),
            Route("/run/{name}", run_page),
            Route("/api/run/{name}", run_data),
            Route("/api/run/{name}/node/{node:int}", node_data),
            Route("/static/{file}", static),
            Route("/favicon.ico", lambda request: Response(status_code=204)),  # no icon, and no 404 in the console
        ],
    )
