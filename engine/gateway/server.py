"""The gateway server: an OpenAI-compatible endpoint on a Unix socket, forwarding through the LLMClient.

With `listen` (`--gateway-listen HOST:PORT`) the same routes are served on a
TCP port too, for Ray workers on other machines (they relay a Unix socket of
their own to it: engine/sandbox/relay.py), with TLS when given a certificate
and key (`--gateway-tls`). The bearer token is the only credential either
way: one per evaluation, refused once it ends. Every refused token (none,
ended, unknown: guessed, or another run's) is told to `on_refused`, which
the engine records as a `gateway_refused` event.

Routes (the subset of the OpenAI API agents use):
- `POST /v1/chat/completions`: {"model"?, "messages", and temperature, top_p,
  max_tokens, max_completion_tokens, stop, seed, presence_penalty,
  frequency_penalty, response_format}; no streaming, n = 1. The answer is a
  `chat.completion` object with `usage`.
- `GET /v1/models`: the models agents may use.
Every request needs `Authorization: Bearer <the evaluation's token>`.

Errors come in OpenAI's shape, {"error": {"message", "type", "code"}}:
401 no, unknown or ended token; 400 a malformed or unsupported request; 404 a
model outside the run's allow-list; 429 `token_cap_exceeded` (this
evaluation's cap: the evaluation ends with status `error`) or
`budget_exceeded` (the run's --max-cost / --max-tokens: the run stops); 502 the
provider failed after the client's retries.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from typing import Self

from engine.gateway.http import HTTPError, Request, read_request, response_bytes
from engine.gateway.sessions import AgentSession, SessionTable
from engine.sandbox.base import LLMEndpoint

# What an agent may set; everything else (tools, logprobs, n > 1, stream) is refused by name.
ANSWER_PARAMS = frozenset(
    {
        "temperature",
        "top_p",
        "max_tokens",
        "max_completion_tokens",
        "stop",
        "seed",
        "presence_penalty",
        "frequency_penalty",
        "response_format",
    }
)
IGNORED = frozenset({"user", "model", "messages", "stream", "n"})
MAX_BODY_BYTES = 4 * 2**20
SOCKET_NAME = "llm.sock"
REFUSALS_TOLD = 200  # refusals told to on_refused; past that only counted (a flood must not fill the archive)


@dataclass(frozen=True)
class GatewaySettings:
    models: tuple[str, ...]  # the allow-list; the first is used when a request names none
    max_tokens_per_evaluation: int | None  # the per-evaluation cap (tokens in + out); None: no cap
    max_body_bytes: int = MAX_BODY_BYTES

    def __post_init__(self) -> None:
        if not self.models:
            raise ValueError("the gateway needs at least one model")


class Gateway:
    """Serve the run's agents; `async with Gateway(client, settings) as gw:` inside the run's event loop."""

    def __init__(
        self,
        client,
        settings: GatewaySettings,
        *,
        base_dir: str | None = None,
        overseer=None,
        listen: tuple[str, int] | None = None,
        tls: tuple[str, str] | None = None,
        on_refused=None,
    ) -> None:
        """`overseer` (engine.gateway.overseer.Overseer, --overseer): reads each session's recent calls and
        may end it. `listen` (host, port; port 0: any free one) serves TCP too, with `tls` (certificate file,
        key file) if given; `on_refused(detail)` hears of every refused token."""
        self.client = client
        self.settings = settings
        self.overseer = overseer
        self._base_dir = base_dir
        self._listen = listen
        self._tls = tls
        self._on_refused = on_refused
        self._tcp: asyncio.AbstractServer | None = None
        self.url: str = ""  # the TCP endpoint workers use (http:// or https://host:port), with `listen`
        self.tls_cert: str = ""  # the certificate a relay pins, with `tls`
        self.refused = 0
        self._sessions = SessionTable()
        self._server: asyncio.AbstractServer | None = None
        self._handlers: set[asyncio.Task] = set()
        self.directory: str | None = None
        self.socket_path: str | None = None

    # ----- lifetime ----------------------------------------------------------
    async def start(self) -> None:
        # a private directory (0700): only the engine's user can reach the socket on the host; a sandbox
        # gets the socket file alone, bound in. Short paths: AF_UNIX allows about 100 bytes.
        self.directory = tempfile.mkdtemp(prefix="clade-gw-", dir=self._base_dir)
        self.socket_path = os.path.join(self.directory, SOCKET_NAME)
        self._server = await asyncio.start_unix_server(self._serve, path=self.socket_path)
        os.chmod(self.socket_path, 0o666)  # a docker job runs as another uid; the directory guards the host
        if self._listen is not None:
            await self._start_tcp(*self._listen)

    async def _start_tcp(self, host: str, port: int) -> None:
        import ssl

        context = None
        if self._tls is not None:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(*self._tls)
            with open(self._tls[0], encoding="ascii") as fh:
                self.tls_cert = fh.read()
        self._tcp = await asyncio.start_server(self._serve, host, port, ssl=context)
        bound = self._tcp.sockets[0].getsockname()[1]
        shown = advertised_host(host)
        shown = f"[{shown}]" if ":" in shown else shown
        self.url = f"{'https' if context else 'http'}://{shown}:{bound}"

    async def close(self) -> None:
        if self._tcp is not None:
            self._tcp.close()
            self._tcp = None
        if self._server is not None:
            self._server.close()
            handlers = list(self._handlers)
            for task in handlers:
                task.cancel()
            await asyncio.gather(*handlers, return_exceptions=True)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 5)
            self._server = None
        if self.directory:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ----- evaluations ---------------------------------------------------------
    def open_session(
        self,
        node_id: int | None,
        instance_id: str | None,
        label: str | None = None,
        purpose: str = "agent",
        cap: int | None = None,
    ) -> AgentSession:
        """A session whose calls are booked as `purpose`; `cap` overrides the per-evaluation token cap."""
        cap = self.settings.max_tokens_per_evaluation if cap is None else cap
        return self._sessions.open(node_id, instance_id, cap, label, purpose)

    def close_session(self, session: AgentSession) -> None:
        """The evaluation is over: its token is refused from now on (calls in flight still finish and are booked)."""
        self._sessions.close(session)
        if self.overseer is not None:
            self.overseer.forget(session)

    def endpoint(self, session: AgentSession) -> LLMEndpoint:
        if self.socket_path is None:
            raise RuntimeError("the gateway is not started")
        return LLMEndpoint(socket_path=self.socket_path, token=session.token, url=self.url, tls_cert=self.tls_cert)

    # ----- HTTP ----------------------------------------------------------------
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None  # the server runs each connection's callback in a task of its own
        self._handlers.add(task)
        try:
            request = None
            try:
                request = await read_request(reader, self.settings.max_body_bytes)
                status, payload = await self._route(request)
            except HTTPError as exc:
                status, payload = exc.status, exc.body()
                if exc.status == 401 and request is not None:
                    self._refuse(request, writer)
            except (TimeoutError, asyncio.IncompleteReadError, ConnectionError):
                return
            writer.write(response_bytes(status, payload))
            with contextlib.suppress(ConnectionError):
                await writer.drain()
        except asyncio.CancelledError:
            # the gateway is closing (or the run stopping): end quietly; a handler task that ends cancelled is
            # printed as "Exception in callback" with a traceback by asyncio's stream callback (Python 3.11)
            return
        finally:
            self._handlers.discard(task)
            writer.close()

    async def _route(self, request: Request) -> tuple[int, dict]:
        path = request.path.rstrip("/")
        if path not in ("/v1/chat/completions", "/chat/completions", "/v1/models", "/models"):
            raise HTTPError(
                404,
                f"no route {request.method} {request.path}; the gateway serves "
                "POST /v1/chat/completions and GET /v1/models",
                code="not_found",
            )
        session = self._sessions.find(request.bearer())
        if session is None:
            why = self._sessions.why_refused(request.bearer())
            said = {
                "no token": "no bearer token",
                "ended": "the token's evaluation has ended",
                "unknown": "unknown token",
            }[why]
            raise HTTPError(
                401, f"{said}: use this evaluation's CLADE_LLM_TOKEN", "authentication_error", "invalid_api_key"
            )
        if path.endswith("/models"):
            if request.method != "GET":
                raise HTTPError(405, "use GET /v1/models")
            return 200, {
                "object": "list",
                "data": [{"id": m, "object": "model", "owned_by": "clade"} for m in self.settings.models],
            }
        if request.method != "POST":
            raise HTTPError(405, "use POST /v1/chat/completions")
        return 200, await self._chat(session, request.json())

    async def _chat(self, session: AgentSession, body: dict) -> dict:
        from engine.llm import BudgetExceeded, LLMError, LLMFatalError

        model, messages, params = self._parse(body)
        async with session.gate:
            if session.stop_reason:
                raise HTTPError(429, session.stop_reason, "budget_exceeded", "budget_exceeded")
            if session.overseer_reason:
                raise HTTPError(
                    429, f"stopped by the overseer: {session.overseer_reason}", "overseer_stop", "overseer_stop"
                )
            if session.over_cap():
                session.end_capped()
                raise HTTPError(429, session.cap_reason, "token_cap_exceeded", "token_cap_exceeded")
            key = session.next_key()
            try:
                answer = await self.client.complete(
                    messages,
                    model=model,
                    purpose=session.purpose,
                    node_id=session.node_id,
                    instance_id=session.instance_id,
                    key=key,
                    **params,
                )
            except BudgetExceeded as exc:
                session.end_stopped(str(exc), fatal=False)
                raise HTTPError(429, str(exc), "budget_exceeded", "budget_exceeded") from None
            except LLMFatalError as exc:
                session.end_stopped(str(exc), fatal=True)
                raise HTTPError(502, str(exc), "upstream_error", "fatal") from None
            except LLMError as exc:
                raise HTTPError(502, str(exc), "upstream_error", "upstream_error") from None
            except ValueError as exc:  # a parameter the client refuses
                raise HTTPError(400, str(exc).splitlines()[0]) from None
            session.tokens_used += answer.tokens_in + answer.tokens_out
            session.cost_usd += answer.cost_usd or 0.0
            if self.overseer is not None:
                self.overseer.heard(session, messages, answer.text)
        return {
            "id": f"clade-{answer.call_id}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": answer.text}, "finish_reason": "stop"}
            ],
            "usage": {
                "prompt_tokens": answer.tokens_in,
                "completion_tokens": answer.tokens_out,
                "total_tokens": answer.tokens_in + answer.tokens_out,
            },
        }

    def _refuse(self, request: Request, writer: asyncio.StreamWriter) -> None:
        """Tell `on_refused` (the first REFUSALS_TOLD times): which path, why, and from where (TCP peers)."""
        self.refused += 1
        if self._on_refused is None or self.refused > REFUSALS_TOLD:
            return
        peer = writer.get_extra_info("peername")
        detail = {
            "why": self._sessions.why_refused(request.bearer()),
            "path": request.path[:200],
            "peer": f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else "unix socket",
            "refusal": self.refused,
        }
        try:
            self._on_refused(detail)
        except Exception:  # noqa: BLE001 - recording a refusal must never break the gateway
            pass

    def _parse(self, body: dict) -> tuple[str, list[dict], dict]:
        model = body.get("model") or self.settings.models[0]
        if model not in self.settings.models:
            raise HTTPError(
                404,
                f"model {model!r} is not available to agents in this run; allowed: {', '.join(self.settings.models)}",
                code="model_not_found",
            )
        if body.get("stream"):
            raise HTTPError(400, "streaming is not supported by the Clade gateway: send stream=false")
        if body.get("n", 1) != 1:
            raise HTTPError(400, "only n=1 is supported: make several calls")
        unknown = sorted(set(body) - ANSWER_PARAMS - IGNORED)
        if unknown:
            raise HTTPError(
                400, f"unsupported parameter(s): {', '.join(unknown)}; supported: {', '.join(sorted(ANSWER_PARAMS))}"
            )
        messages = body.get("messages")
        if (
            not isinstance(messages, list)
            or not messages
            or not all(isinstance(m, dict) and isinstance(m.get("role"), str) and "content" in m for m in messages)
        ):
            raise HTTPError(400, "messages must be a non-empty list of {role, content} objects")
        params = {k: body[k] for k in ANSWER_PARAMS if k in body and body[k] is not None}
        return model, messages, params


def advertised_host(host: str) -> str:
    """The address workers are told: `host` itself, or for a wildcard (0.0.0.0, ::) this machine's address
    on its outbound route (no packet is sent: a UDP socket only picks the route)."""
    if host not in ("", "0.0.0.0", "::"):
        return host
    import socket

    family = socket.AF_INET6 if host == "::" else socket.AF_INET
    probe = ("2001:db8::1", 9) if family == socket.AF_INET6 else ("192.0.2.1", 9)
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as sock:
            sock.connect(probe)
            return sock.getsockname()[0]
    except OSError:
        return socket.gethostbyname(socket.gethostname())
