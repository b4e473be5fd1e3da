"""A job's output: its pipes read without blocking the loop, only the last bytes of each kept.

Shared by the backends: `process` and `bwrap` read the supervisor's pipes
with `_read_task`; `docker` fills the same `_Tail` from the daemon's log
stream. A job printing gigabytes neither blocks on a full pipe nor fills the
engine's memory.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable

_CHUNK = 64 * 1024
_PIPE_GRACE_S = 2.0  # after the job ended, how long open output pipes are waited for


def _read_task(fd: int, tail: _Tail | None = None) -> asyncio.Task[bytes]:
    """A task reading pipe `fd` to EOF without blocking the loop; it closes fd however it ends.

    With `tail`, chunks go there (only the last bytes are kept) and the task
    returns b''; without, it returns everything read (the status report).
    """
    task = asyncio.create_task(_read_until_eof(fd, tail))
    task.add_done_callback(lambda _: os.close(fd))  # runs even if cancelled unstarted
    return task


async def _read_until_eof(fd: int, tail: _Tail | None) -> bytes:
    loop = asyncio.get_running_loop()
    chunks: list[bytes] = []
    eof = loop.create_future()

    def readable() -> None:
        try:
            while data := os.read(fd, _CHUNK):
                if tail is None:
                    chunks.append(data)
                else:
                    tail.add(data)
        except BlockingIOError:
            return
        if not eof.done():
            eof.set_result(None)

    os.set_blocking(fd, False)
    loop.add_reader(fd, readable)
    try:
        await eof
    finally:
        loop.remove_reader(fd)
    return b"".join(chunks)


class _Tail:
    """The last `keep` bytes of a stream, whatever its length."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.buf = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        if self.keep <= 0:
            return
        if len(chunk) >= self.keep:
            self.buf = bytearray(chunk[-self.keep :])
            return
        self.buf += chunk
        excess = len(self.buf) - self.keep
        if excess > 0:
            del self.buf[:excess]

    def text(self) -> str:
        return self.buf.decode("utf-8", errors="replace")


async def _finish(readers: list[asyncio.Task[bytes]], warn: Callable[[str], None]) -> None:
    """Let the output readers reach EOF; stop waiting if a process escaped holding a pipe."""
    _, pending = await asyncio.wait(readers, timeout=_PIPE_GRACE_S)
    if pending:
        warn("process sandbox: output pipes still open after the job ended; a process may have escaped")
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
