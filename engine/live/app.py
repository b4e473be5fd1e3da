"""The live page's routes (Starlette): two HTML shells, four JSON endpoints, a few static files.

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


class _Endpoints:
    """The routes' handlers over one set of sources (plain methods: Starlette runs them in its thread pool)."""

    def __init__(self, sources: Sources) -> None:
        self.sources = sources
        self.files = _static_files()

    def no_run(self, name: str, as_json: bool):
        from starlette.responses import HTMLResponse, JSONResponse

        message = f"no run named {name!r} here (the runs are under {', '.join(map(str, self.sources.paths))})"
        return JSONResponse({"error": message}, 404) if as_json else HTMLResponse(page.not_found_html(message), 404)

    def index(self, request):
        from starlette.responses import HTMLResponse

        return HTMLResponse(page.index_html())

    def runs(self, request):
        from starlette.responses import JSONResponse

        return JSONResponse(view.index_rows(self.sources))

    def run_page(self, request):
        from starlette.responses import HTMLResponse

        name = request.path_params["name"]
        return HTMLResponse(page.run_html(name)) if self.sources.find(name) else self.no_run(name, False)

    def run_data(self, request):
        from starlette.responses import JSONResponse

        name = request.path_params["name"]
        folder = self.sources.find(name)
        if folder is None:
            return self.no_run(name, True)
        return JSONResponse(view.run_view(folder, request.query_params.get("since")))

    def node_data(self, request):
        from starlette.responses import JSONResponse

        name, node = request.path_params["name"], request.path_params["node"]
        folder = self.sources.find(name)
        if folder is None:
            return self.no_run(name, True)
        try:
            found = view.node_view(folder, node)
        except view.ArchiveLocked:
            return JSONResponse({"error": f"{name} is {view.LOCKED}"}, 503)
        if found is None:
            return JSONResponse({"error": f"run {name} has no node {node}"}, 404)
        return JSONResponse(found)

    async def human(self, request):
        """GET: the human mutator's pending question; POST: the answer to it (engine/live/human.py)."""
        from starlette.responses import JSONResponse

        from engine.live import human

        name = request.path_params["name"]
        folder = self.sources.find(name)
        if folder is None:
            return self.no_run(name, True)
        if request.method != "POST":
            return JSONResponse(human.pending_view(folder))
        if request.headers.get(human.ANSWER_HEADER) != "1":
            return JSONResponse({"error": f"an answer needs the header {human.ANSWER_HEADER}: 1"}, 403)
        if not human.same_origin(request.headers.get("origin"), request.headers.get("host"), request.url.scheme):
            return JSONResponse({"error": "an answer must come from this page (another origin sent it)"}, 403)
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > human.MAX_BODY_BYTES:
            return JSONResponse({"error": f"the body is over {human.MAX_BODY_BYTES} bytes"}, 413)
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > human.MAX_BODY_BYTES:
                return JSONResponse({"error": f"the body is over {human.MAX_BODY_BYTES} bytes"}, 413)
        status, message = human.take_answer(folder, body)
        return JSONResponse({"message": message} if status == 200 else {"error": message}, status)

    def static(self, request):
        from starlette.responses import Response

        found = self.files.get(request.path_params["file"])
        if found is None:
            return Response("not found", 404, media_type="text/plain")
        return Response(found[0].read_bytes(), media_type=found[1], headers={"Cache-Control": "no-cache"})


def build_app(sources: Sources, token: str | None = None, cookie: str = "", secure: bool = False):
    """The Starlette app serving the runs under `sources`, read-only (GET and HEAD) but for one write, the
    answer to a human mutator's question (engine/live/human.py); with `token`, to those who give it only
    (engine/live/auth.py: in the URL, then the cookie named `cookie`, or a Bearer header)."""
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.gzip import GZipMiddleware
    from starlette.responses import Response
    from starlette.routing import Route

    from engine.live.auth import TokenGate

    serve = _Endpoints(sources)
    # gzip: a big run's tree and charts are a few MB of markup per change, a tenth of that compressed
    return Starlette(
        middleware=[
            Middleware(TokenGate, token=token, cookie=cookie, secure=secure),  # the outermost: before anything runs
            Middleware(GZipMiddleware, minimum_size=4096),
        ],
        routes=[
            Route("/", serve.index),
            Route("/api/runs", serve.runs),
            Route("/run/{name}", serve.run_page),
            Route("/api/run/{name}", serve.run_data),
            Route("/api/run/{name}/node/{node:int}", serve.node_data),
            Route("/api/run/{name}/human", serve.human, methods=["GET", "HEAD", "POST"]),  # the one write
            Route("/static/{file}", serve.static),
            Route("/favicon.ico", lambda request: Response(status_code=204)),  # no icon, and no 404 in the console
        ],
    )
