"""A Unix socket on a Ray worker that forwards to the run's gateway over TCP (`--gateway-listen`).

Why a relay and not the URL itself: a bwrap or docker job has no network
(its namespace is empty), and that must not change because the gateway is on
another machine. The worker, outside the sandbox, listens on a private Unix
socket for the length of one job and pipes each connection's bytes to the
gateway's host:port (TLS when the URL is https, the gateway's certificate
pinned: only that certificate is trusted). The job gets that socket exactly
as it gets the local gateway's: bound alone at /run/clade/llm.sock. The
token travels inside the agent's own request; the relay neither reads nor
adds anything, so it holds no secret either.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import ssl
import tempfile
from collections.abc import AsyncIterator
from dataclasses import replace
from urllib.parse import urlsplit

from .base import LLMEndpoint

CHUNK = 65536


def client_tls(cert_pem: str) -> ssl.SSLContext:
    """A client context that trusts only the gateway's own certificate (pinned; no host name check, since
    the certificate, not the name, is what is trusted)."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cadata=cert_pem)
    context.check_hostname = False
    return context


@contextlib.asynccontextmanager
async def relayed(endpoint: LLMEndpoint) -> AsyncIterator[LLMEndpoint]:
    """The endpoint a job on this machine should use: `endpoint` itself when it is a local socket, else a
    relay's socket to its URL, open while the context lasts."""
    if not endpoint.url:
        yield endpoint
        return
    parts = urlsplit(endpoint.url)
    host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
    tls = client_tls(endpoint.tls_cert) if parts.scheme == "https" else None
    folder = tempfile.mkdtemp(prefix="clade-relay-")
    path = os.path.join(folder, "llm.sock")
    pipes: set[asyncio.Task] = set()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None  # the server runs each connection's callback in a task of its own
        pipes.add(task)
        try:
            up_reader, up_writer = await asyncio.open_connection(host, port, ssl=tls)
        except (OSError, ssl.SSLError):
            writer.close()
            pipes.discard(task)
            return
        try:
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        except asyncio.CancelledError:
            pass
        finally:
            pipes.discard(task)
            for w in (writer, up_writer):
                w.close()

    server = await asyncio.start_unix_server(serve, path=path)
    os.chmod(path, 0o666)  # a docker job runs as another uid; the 0700 folder guards the host
    try:
        yield replace(endpoint, socket_path=path, url="", tls_cert="")
    finally:
        server.close()
        for task in list(pipes):
            task.cancel()
        await asyncio.gather(*pipes, return_exceptions=True)
        shutil.rmtree(folder, ignore_errors=True)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, ssl.SSLError, OSError):
        pass
