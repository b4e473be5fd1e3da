"""Running the docker SDK's blocking calls from asyncio without losing a container.

`_settled` runs a short call (create, remove) to its end even when Ctrl-C
cancels the awaiting task, so no container is made and forgotten;
`_in_thread` runs a call that lasts as long as a job (wait, log streams) on
its own daemon thread, so the loop's shared executor stays free for kills.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any


async def _settled(fn: Callable[..., Any], *args: Any) -> tuple[asyncio.Future[Any], bool]:
    """Run a short blocking call on the loop's executor to its end, even if cancelled meanwhile.

    Returns (its finished future, whether a cancellation arrived meanwhile): a
    container must not be left behind because Ctrl-C cut its creation or removal
    short; the caller goes on with the cancellation afterwards. The future is
    not a Task, so cancelling all tasks at the loop's shutdown leaves it alone.
    """
    future = asyncio.get_running_loop().run_in_executor(None, fn, *args)
    future.add_done_callback(_retrieve)
    cancelled = False
    while not future.done():
        try:
            await asyncio.shield(future)
        except asyncio.CancelledError:
            cancelled = True
        except BaseException:  # noqa: BLE001, S110 - the call's own failure, read from the future
            pass
    return future, cancelled


def _in_thread(fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
    """Run a long blocking call (waiting on a container) on its own daemon thread.

    Not asyncio.to_thread: calls that last as long as a job would fill the
    loop's shared executor, and the kills queued behind them would never run.
    The thread ends when its container is gone.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    future.add_done_callback(_retrieve)

    def settle(result: Any, exc: BaseException | None) -> None:
        if future.done():
            return
        if exc is None:
            future.set_result(result)
        else:
            future.set_exception(exc)

    def target() -> None:
        try:
            result, exc = fn(*args), None
        except BaseException as e:  # noqa: BLE001 - handed to the awaiting side
            result, exc = None, e
        try:
            loop.call_soon_threadsafe(settle, result, exc)
        except RuntimeError:
            pass  # the loop is closed: nobody is waiting any more

    threading.Thread(target=target, name="clade-docker-wait", daemon=True).start()
    return future


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()  # an unawaited failure is expected (the container was removed), not a warning
