"""A container's output: what the job's capture wrote, else its log streams followed into bounded tails.

Inside the container `_capture.py` runs the command with pipes and writes the
last `output_bytes` of its stdout and stderr into a bind-mounted host folder
(`take_captured` reads them), so the end arrives whatever the daemon does
under load. The daemon's log is the fallback, for what the capture did not
write (the image's python3 could not start): its log API streams stdout and
stderr as they come; only the last `output_bytes` of each are kept
(`output._Tail`). Once the container stopped, the streams get a grace period
to deliver the rest, and the tail is compared with the daemon's capped log,
which wins when the stream lost the end.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
from typing import Any

from .output import _Tail

log = logging.getLogger(__name__)

_TAIL_LINES = 64
# After the container stopped, how long its log streams get to deliver the rest: they end by
# themselves once the daemon has sent everything, which takes seconds for megabytes on a busy daemon.
_PUMP_GRACE_S = 30.0
_CLOSE_GRACE_S = 2.0


def _pump(container: Any, stdout: bool, tail: _Tail, streams: list[Any]) -> None:
    """Blocking: follow one of the container's output streams into `tail` until it ends."""
    stream = container.logs(stdout=stdout, stderr=not stdout, stream=True, follow=True)
    streams.append(stream)
    for chunk in stream:
        tail.add(chunk)


def _settle_tails(container: Any, out: _Tail, err: _Tail, errors: tuple[type[BaseException], ...]) -> None:
    """Blocking: check each stream's tail against the daemon's log once the container stopped.

    A followed stream can lose data when the capped json-file log rotates
    under a flood, the end included; the log itself keeps the latest output,
    which then replaces the tail.
    At most _TAIL_LINES lines of at most 16 KB each (the daemon splits longer
    ones) are read, so a flood never reaches the engine's memory.
    """
    for tail, stdout in ((out, True), (err, False)):
        if tail.keep <= 0:
            continue
        try:
            last = container.logs(stdout=stdout, stderr=not stdout, tail=_TAIL_LINES)
        except errors:
            continue  # keep what the stream brought
        last = last[-tail.keep :]
        if last and not tail.buf.endswith(last):  # the stream lost the end: the log's last lines win
            tail.buf = bytearray(last)


async def _drain(pumps: list[asyncio.Future[Any]], streams: list[Any]) -> None:
    """Let the log streams deliver what is left (they end with the container); close them if stuck."""
    _, pending = await asyncio.wait(pumps, timeout=_PUMP_GRACE_S)
    if pending:
        log.warning(
            "docker sandbox: output still streaming %.0f s after the container stopped; keeping what arrived",
            _PUMP_GRACE_S,
        )
        for stream in list(streams):
            try:
                stream.close()
            except Exception:  # noqa: BLE001, S110 - a stream already gone
                pass
        await asyncio.wait(pending, timeout=_CLOSE_GRACE_S)


def take_captured(folder: str, out: _Tail, err: _Tail) -> bool:
    """The tails the job's capture wrote in `folder` in place of the streamed ones; False when it wrote none.

    Read after every process of the job is dead; a file the job replaced by a link or a folder is not followed
    (the job runs as the user that may write there), and no more than a tail's bytes are read of any."""
    state_text = _read_last(os.path.join(folder, "state.json"), 4096)
    try:
        state = json.loads(state_text) if state_text is not None else None
    except ValueError:
        state = None
    if not isinstance(state, dict):
        return False
    streams = ((out, "stdout"), (err, "stderr"))
    read = {name: _read_last(os.path.join(folder, name), max(tail.keep, 0)) for tail, name in streams}
    if None in read.values():
        return False  # both or neither: never one stream's capture beside the other's log
    for tail, name in streams:
        data = read[name] or b""
        tail.buf = bytearray(data)
        total = state.get(f"{name}_total")
        tail.total = total if isinstance(total, int) and total >= len(data) else len(data)
    return True


def _read_last(path: str, keep: int) -> bytes | None:
    """The last `keep` bytes of a regular file, without following a link; None when there is none."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        os.lseek(fd, max(info.st_size - keep, 0), os.SEEK_SET)
        chunks, left = [], keep
        while left > 0 and (data := os.read(fd, min(left, 1 << 20))):
            chunks.append(data)
            left -= len(data)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)
