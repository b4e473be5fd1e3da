"""A container's output: its log streams followed into bounded tails, checked against the log at the end.

The daemon's log API streams stdout and stderr as they come; only the last
`output_bytes` of each are kept (`output._Tail`). Once the container stopped,
the streams get a grace period to deliver the rest, and the tail is compared
with the daemon's capped log, which wins when the stream lost the end.
"""

from __future__ import annotations

import asyncio
import logging
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
