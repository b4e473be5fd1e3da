"""An OpenAI-compatible chat server on loopback, for tests that drive the real litellm over real HTTP.

    with OpenAIStub(lambda body, n: Answer("hello")) as stub:
        ... --model openai/stub --api-base {stub.url} ...

`respond(body, n)` gets the request's JSON body and its number (0, 1, ...)
and returns what the server does: `Answer(text, delay_s)` (a chat
completion with usage), `Fail(status, message)` (an error body in OpenAI's
shape: 401 "Incorrect API key provided", 429, 500, ...) or `Hang()` (no
answer until the server stops). The server runs in a thread, so a search may
run in this process or in a subprocess; `requests` keeps every chat body received.

POST /v1/embeddings answers `embed(text) -> list[float]` for each input (by
default `bag_of_words`), with usage; `embedding_requests` keeps those bodies.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Answer:
    text: str
    delay_s: float = 0.0


@dataclass(frozen=True)
class Fail:
    status: int
    message: str = "server error"
    kind: str = "server_error"  # OpenAI's error.type
    code: str | None = None


@dataclass(frozen=True)
class Hang:
    """Accept the request and never answer (until the server stops)."""


Respond = Callable[[dict, int], "Answer | Fail | Hang"]

BAD_KEY = Fail(
    401,
    "Incorrect API key provided: sk-wrong. You can find your API key at https://platform.openai.com/account/api-keys.",
    "invalid_request_error",
    "invalid_api_key",
)


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address) -> None:
        """A client that went away (a search killed or cancelled mid-call) is not the test's failure."""
        import sys

        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


def _words(text: str) -> int:
    return max(1, len(text.split()))


def bag_of_words(text: str, dims: int = 64) -> list[float]:
    """A deterministic stand-in embedding: word counts hashed into `dims` buckets."""
    import zlib

    vector = [0.0] * dims
    for word in text.split():
        vector[zlib.crc32(word.encode()) % dims] += 1.0
    return vector


class OpenAIStub:
    def __init__(self, respond: Respond, embed: Callable[[str], list[float]] = bag_of_words) -> None:
        self.respond = respond
        self.embed = embed
        self.requests: list[dict] = []
        self.embedding_requests: list[dict] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _embeddings(self, body: dict) -> None:
                with stub._lock:
                    stub.embedding_requests.append(body)
                texts = body.get("input") or []
                texts = [texts] if isinstance(texts, str) else texts
                tokens = sum(_words(str(t)) for t in texts)
                self._send(
                    200,
                    {
                        "object": "list",
                        "model": body.get("model", "stub"),
                        "data": [
                            {"object": "embedding", "index": i, "embedding": stub.embed(str(t))}
                            for i, t in enumerate(texts)
                        ],
                        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
                    },
                )

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                self._send(200, {"object": "list", "data": [{"id": "stub", "object": "model"}]})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.rstrip("/").endswith("/embeddings"):
                    self._embeddings(body)
                    return
                with stub._lock:
                    n = len(stub.requests)
                    stub.requests.append(body)
                reply = stub.respond(body, n)
                if isinstance(reply, Hang):
                    stub._stopping.wait()
                    return
                if isinstance(reply, Fail):
                    self._send(
                        reply.status,
                        {"error": {"message": reply.message, "type": reply.kind, "param": None, "code": reply.code}},
                    )
                    return
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                prompt = sum(_words(str(m.get("content", ""))) for m in body.get("messages", []))
                out = _words(reply.text)
                self._send(
                    200,
                    {
                        "id": f"chatcmpl-stub-{n}",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model", "stub"),
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": reply.text},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out},
                    },
                )

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def chat_requests(self) -> list[dict]:
        with self._lock:
            return list(self.requests)

    def start(self) -> OpenAIStub:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
