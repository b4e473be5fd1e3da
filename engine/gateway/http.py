"""Just enough HTTP/1.1 for the gateway: read one request from a stream, write one JSON response.

One request per connection (the response says `Connection: close`); bodies
need a Content-Length (no chunked uploads) and are capped; a client that
sends nothing for READ_TIMEOUT_S is dropped.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from http import HTTPStatus

READ_TIMEOUT_S = 30.0
MAX_HEADERS = 100


class HTTPError(Exception):
    """An error answered in OpenAI's shape: {"error": {"message", "type", "code"}}."""

    def __init__(self, status: int, message: str, kind: str = "invalid_request_error", code: str | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.kind = kind
        self.code = code

    def body(self) -> dict:
        return {"error": {"message": self.message, "type": self.kind, "code": self.code, "param": None}}


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: bytes

    def bearer(self) -> str:
        value = self.headers.get("authorization", "")
        scheme, _, token = value.partition(" ")
        return token.strip() if scheme.lower() == "bearer" else ""

    def json(self) -> dict:
        try:
            data = json.loads(self.body or b"null")
        except (ValueError, UnicodeDecodeError):
            raise HTTPError(400, "the request body is not JSON") from None
        if not isinstance(data, dict):
            raise HTTPError(400, "the request body must be a JSON object")
        return data


async def read_request(reader: asyncio.StreamReader, max_body: int) -> Request:
    return await asyncio.wait_for(_read(reader, max_body), READ_TIMEOUT_S)


async def _read(reader: asyncio.StreamReader, max_body: int) -> Request:
    try:
        line = (await reader.readline()).decode("latin-1").rstrip("\r\n")
        parts = line.split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            raise HTTPError(400, "malformed request line")
        method, target, _ = parts
        headers: dict[str, str] = {}
        for _ in range(MAX_HEADERS + 1):
            raw = (await reader.readline()).decode("latin-1").rstrip("\r\n")
            if not raw:
                break
            name, colon, value = raw.partition(":")
            if not colon:
                raise HTTPError(400, "malformed header line")
            headers[name.strip().lower()] = value.strip()
        else:
            raise HTTPError(431, "too many header lines")
    except (ValueError, asyncio.LimitOverrunError):
        raise HTTPError(431, "request line or header too long") from None
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raise HTTPError(411, "chunked request bodies are not supported: send a Content-Length")
    try:
        length = int(headers.get("content-length", "0"))
    except ValueError:
        raise HTTPError(400, "bad Content-Length") from None
    if length < 0 or length > max_body:
        raise HTTPError(413, f"request body over {max_body} bytes")
    body = await reader.readexactly(length) if length else b""
    return Request(method.upper(), target.split("?", 1)[0], headers, body)


def response_bytes(status: int, payload: dict) -> bytes:
    body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = "Error"
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode("latin-1") + body
