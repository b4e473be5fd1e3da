"""Who may read the live page: a token checked on every request, and reading only (GET and HEAD).

An ASGI middleware in front of every route (the page, the static files, the JSON API; a websocket, should
one ever be added, is closed). The token comes in one of three ways, as Jupyter's does: `?token=` in the
URL the server prints (the first visit), then a cookie the answer sets (HttpOnly, SameSite=Strict, Secure
over HTTPS) so the page's own fetches and links carry it, or an `Authorization: Bearer` header (scripts).
It is compared in constant time (hmac.compare_digest). A request without a valid token gets 401 and a
short plain message: no run name, no node, nothing read from an archive.

Every method but GET and HEAD is 405 (after the token: a stranger learns nothing, not even the routes),
whatever the path: the page only reads (the archives are opened read-only, engine/live/view.py). The one
exception is POST /api/run/NAME/human, a person's answer to a `--mutator human` run's question, written to
the run folder (engine/live/human.py says how it is kept safe from other sites).
"""

from __future__ import annotations

import hmac
import re
from http.cookies import SimpleCookie
from urllib.parse import parse_qs

READING = frozenset({"GET", "HEAD"})
UNAUTHORIZED = b"401: this page needs its token: open the URL `clade runs serve` printed (it ends in ?token=...)\n"
NOT_ALLOWED = b"405: the live page only reads (GET and HEAD)\n"
ANSWER_PATH = re.compile(r"/api/run/[^/]+/human")  # the one write: an answer to a human mutator's question
TOKEN_CHARACTERS = re.compile(r"[A-Za-z0-9._~-]+")  # what a URL and a cookie carry as they are


def token_problem(token: str) -> str | None:
    """Why a token given by the user cannot be used, or None."""
    if not token:
        return "the token is empty"
    if not TOKEN_CHARACTERS.fullmatch(token):
        return "a token may hold only letters, digits and - _ . ~ (it goes in a URL and a cookie as it is)"
    return None


def cookie_name(port: int) -> str:
    """One cookie per port: cookies do not tell ports apart, so two servers on one host keep theirs."""
    return f"clade-live-token-{port}"


def _matches(given: str | None, token: bytes) -> bool:
    return given is not None and hmac.compare_digest(given.encode("utf-8", "surrogateescape"), token)


def _header(scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin-1")
    return None


class TokenGate:
    """ASGI middleware: a request passes with the token (URL, cookie or Bearer header), else 401; a
    request with the token in its URL gets the cookie set on its answer."""

    def __init__(self, app, token: str | None, cookie: str, secure: bool) -> None:
        self.app = app
        self.token = None if token is None else token.encode("utf-8", "surrogateescape")
        self.cookie = cookie
        self.secure = secure

    def _from_url(self, scope) -> str | None:
        values = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token")
        return values[-1] if values else None

    def _from_cookie(self, scope) -> str | None:
        raw = _header(scope, b"cookie")
        if raw is None:
            return None
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(raw)
        except Exception:  # a malformed Cookie header (http.cookies.CookieError): no token there
            return None
        found = jar.get(self.cookie)
        return None if found is None else found.value

    def _from_header(self, scope) -> str | None:
        raw = _header(scope, b"authorization")
        if raw is None or not raw[:7].lower() == "bearer ":
            return None
        return raw[7:].strip()

    def _set_cookie(self, send):
        value = self.token.decode("utf-8", "surrogateescape") if self.token else ""
        cookie = f"{self.cookie}={value}; Path=/; HttpOnly; SameSite=Strict" + ("; Secure" if self.secure else "")

        async def sending(message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), (b"set-cookie", cookie.encode())]}
            await send(message)

        return sending

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        token = self.token
        in_url = token is not None and _matches(self._from_url(scope), token)
        if token is not None and not (
            in_url or _matches(self._from_cookie(scope), token) or _matches(self._from_header(scope), token)
        ):
            await _refuse(scope, send, 401, UNAUTHORIZED, [(b"www-authenticate", b"Bearer")])
            return
        if scope["type"] == "websocket":  # the page has none: nothing to open
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["method"] not in READING and not (scope["method"] == "POST" and ANSWER_PATH.fullmatch(scope["path"])):
            await _refuse(scope, send, 405, NOT_ALLOWED, [(b"allow", b"GET, HEAD")])
            return
        await self.app(scope, receive, self._set_cookie(send) if in_url else send)


async def _refuse(scope, send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008})
        return
    head = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()), *headers]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})
