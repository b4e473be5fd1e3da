"""`python -m engine.runs serve`: check what the user gave, bind the port, serve until Ctrl-C.

Everything a user can get wrong (the extra not installed, a path that is not a run, a port in use) ends in
one line on stderr and exit code 2 before anything is served; the port is bound here first, so "in use"
is said plainly instead of as a uvicorn traceback.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path

EXIT_USER_ERROR = 2


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return EXIT_USER_ERROR


def _sources(runs: list[str], run_dir: str):
    """The paths to serve: those given (a run folder, its archive, a folder of runs, or a run id under
    --run-dir), else --run-dir itself (which may not exist yet: runs appear as searches start)."""
    from engine.live.sources import Sources, check_source

    if not runs:
        return Sources([Path(run_dir)])
    out = []
    for name in runs:
        given = Path(name)
        if not given.exists() and (Path(run_dir) / name).exists():
            given = Path(run_dir) / name
        out.append(check_source(given))
    return Sources(out)


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        reason = (
            "is in use (choose another with --port, or --port 0 for any free one)"
            if exc.errno in (98, 48)
            else f"cannot be bound ({exc.strerror})"
        )
        raise OSError(f"port {port} on {host} {reason}") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def _without_the_extra() -> str:
    """Why the live page cannot be served here (Starlette or uvicorn missing), or ''."""
    from importlib.util import find_spec

    if find_spec("starlette") is not None and find_spec("uvicorn") is not None:
        return ""
    from engine.install import install_extra

    return f"serve needs the live extra (Starlette and uvicorn): {install_extra('live')}"


def serve(
    runs: list[str],
    run_dir: str = "runs",
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    certfile: str | None = None,
    keyfile: str | None = None,
) -> int:
    """Serve the live page; returns the exit code (0 after Ctrl-C). Beyond loopback, or with `token` (else
    CLADE_LIVE_TOKEN), every request needs the token (engine/live/access.py, engine/live/auth.py)."""
    import os

    if _without_the_extra():
        return _fail(_without_the_extra())
    import uvicorn

    from archive import ArchiveError
    from engine.errors import EXIT_INTERRUPTED
    from engine.live.access import TOKEN_ENV, AccessError, access_for
    from engine.live.app import build_app
    from engine.live.auth import cookie_name
    from engine.runinfo.yielding import yielding

    try:
        access = access_for(host, token, os.environ.get(TOKEN_ENV), certfile, keyfile)
        sources = _sources(runs, run_dir)
        sock = _bind(host, port)
    except (AccessError, ArchiveError, OSError) as exc:
        return _fail(str(exc))
    shown = sock.getsockname()[1]
    note = access.clear_text_note(host)
    if note:
        print(note, file=sys.stderr, flush=True)
    print(f"Serving {', '.join(map(str, sources.paths))} at {access.url(host, shown)} (Ctrl-C stops)", flush=True)
    app = build_app(sources, access.token, cookie_name(shown), secure=access.certfile is not None)
    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="off",
        timeout_graceful_shutdown=2,
        ssl_certfile=access.certfile,
        ssl_keyfile=access.keyfile,
    )
    server = uvicorn.Server(config)

    def run_server() -> int:
        try:
            server.run(sockets=[sock])
        except KeyboardInterrupt:
            pass
        print("Stopped.", flush=True)
        return 0

    try:  # started (imports, socket) at the usual priority, then serves at the lowest: the search goes first
        code = yielding(run_server)
        return 0 if code == EXIT_INTERRUPTED else code  # a Ctrl-C before the server had started: stopped too
    finally:
        sock.close()
